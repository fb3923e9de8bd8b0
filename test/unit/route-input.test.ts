import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { avatarGetRequest } from '../../shared/avatars/schemas.ts';
import { messageAddRequest } from '../../shared/messages/schemas.ts';
import { bearer, protectedChain } from '../support/chain.ts';
import { hasNoInternals } from '../support/host.ts';
import { invoke } from '../support/lambda-event.ts';

/*
 * What routes answer to input they refuse, before their action runs: the route's chain
 * (test/support/chain.ts) with the route's schema, called with an event and no server. What the
 * actions check (the sender's domain, 113; `send_at`; the Idempotency-Key) is in
 * test/integration/messages-add.test.ts; the accepted sizes of an avatar in avatars.test.ts.
 */
const chain = protectedChain(
  'message-add',
  { scopes: ['messages:send'] },
  {
    schema: messageAddRequest,
    from: 'body',
  },
);

function textMessage(extra: Record<string, unknown> = {}) {
  return {
    message_sender: 'noreply@sender.test',
    to: ['Ada <ada@recipient.test>'],
    subject: 'Hello',
    content: { kind: 'text_only', text: 'Hi there' },
    ...extra,
  };
}

const add = (body: unknown) => invoke(chain, 'message-add', { headers: bearer, body });
const fields = (body: any): string[] => body.error.details.map((detail: { field: string }) => detail.field);

describe('POST /message/add-1.0 input, through its chain', () => {
  it('answers a body that is not JSON with 106', async () => {
    const response = await invoke(chain, 'message-add', {
      headers: { ...bearer, 'content-type': 'application/json' },
      rawBody: '{"message_sender": ',
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.error.code, 106);
  });

  it('answers invalid addresses with 10000001 and a detail for every bad field', async () => {
    const response = await add(
      textMessage({
        to: ['good@recipient.test', 'not-an-address'],
        cc: [{ email: 'a@@b.test' }],
        reply_to: ['Name <missing-at.test>'],
      }),
    );
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 10000001);
    assert.deepEqual(fields(response.body).sort(), ['cc[0]', 'reply_to[0]', 'to[1]']);
    assert.ok(hasNoInternals(response.text));
  });

  it('answers bad parameters with 107 and field details', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ subject: 'Hi\r\nBcc: victim@else.test' }, 'subject'],
      [{ to: [{ email: 'a@recipient.test', name: 'Eve\nBcc: x@y.test' }] }, 'to[0]'],
      [{ headers: { 'X-Tag': 'a\r\nBcc: x@y.test' } }, 'headers.X-Tag'],
      [{ headers: { Subject: 'override' } }, 'headers.Subject'],
      [{ content: { kind: 'pdf' } }, 'content.kind'],
      [{ content: { kind: 'eml', eml: 'not base64!' } }, 'content.eml'],
      [
        {
          attachments: Array.from({ length: 51 }, (_, i) => ({
            filename: `f${i}.txt`,
            content_type: 'text/plain',
            content: 'aGk=',
          })),
        },
        'attachments',
      ],
      [
        { attachments: [{ filename: 'a.txt', content_type: 'nope', content: 'aGk=' }] },
        'attachments[0].content_type',
      ],
      [{ to: [] }, 'to'],
      [{ content: undefined }, 'content'],
      [{ scheduling: { mode: 'later' } }, 'scheduling.mode'],
      [{ scheduling: { mode: 'manual-send', message_uuid: 'nope' } }, 'scheduling.message_uuid'],
    ];
    for (const [change, field] of cases) {
      const response = await add(textMessage(change));
      assert.equal(response.status, 406, `${field}: ${response.text}`);
      assert.equal(response.body.error.code, 107, `${field}: ${response.text}`);
      assert.ok(fields(response.body).includes(field), `${field}: ${response.text}`);
    }
    const empty = await add({});
    assert.equal(empty.body.error.code, 107);
    const missing = fields(empty.body);
    assert.ok(missing.includes('message_sender') && missing.includes('content'), empty.text);
  });
});

describe('GET /avatar/get-1.0 input, through its chain', () => {
  const avatars = protectedChain(
    'avatar-get',
    { scopes: ['avatars:read'] },
    {
      schema: avatarGetRequest,
      from: 'query',
    },
  );
  const getAvatar = (query: Record<string, string>) =>
    invoke(avatars, 'avatar-get', { headers: bearer, query });

  it('answers 10000001 for an invalid address, listing the field', async () => {
    for (const email of [
      'not-an-address',
      'Jane <jane@example.com>',
      '',
      'a@b',
      `${'x'.repeat(250)}@example.com`,
    ]) {
      const response = await getAvatar({ email });
      assert.equal(response.status, 406, email);
      assert.equal(response.body.error.code, 10000001, email);
      assert.equal(response.body.error.details[0].field, 'email');
      assert.ok(hasNoInternals(response.text));
    }
  });

  it('answers 107 when the address is missing altogether', async () => {
    const response = await getAvatar({ size: '80' });
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.equal(response.body.error.details[0].field, 'email');
  });

  it('answers 10010001 for a size outside 16–512 or not a whole number', async () => {
    for (const size of ['15', '513', '0', '-20', '80.5', 'abc', '', '1e2', ' 80']) {
      const response = await getAvatar({ email: 'jane@example.com', size });
      assert.equal(response.status, 406, `size ${JSON.stringify(size)}`);
      assert.equal(response.body.error.code, 10010001, `size ${JSON.stringify(size)}`);
      assert.equal(response.body.error.details[0].field, 'size');
    }
  });
});
