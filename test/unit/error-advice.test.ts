import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { notYourDomainMessage } from '../../shared/messages/model/domain-ownership.ts';
import { messageAddRequest, messageBatchRequest } from '../../shared/messages/schemas.ts';
import { checkInput } from '../../shared/platform/middleware/validate-input.ts';
import { webhookEventTypes } from '../../shared/webhooks/model/events.ts';
import { webhookAddRequest } from '../../shared/webhooks/schemas.ts';

/** The details of a refused body, or the accepted value. */
function check(schema: Parameters<typeof checkInput>[0], body: unknown) {
  const result = checkInput(schema, body);
  if ('value' in result) return { value: result.value as Record<string, unknown> };
  const details = (result.error as unknown as { details: { field: string; message: string }[] }).details;
  return { code: result.error.code, details };
}

const sender = 'app@example.test';
const text = { kind: 'text_only', text: 'Hi' };

describe('errors that say what to do', () => {
  it('a Resend-shaped body (strings for from/to, a top-level html) is told where html goes', () => {
    const answer = check(messageAddRequest, {
      message_sender: sender,
      from: `App <${sender}>`,
      to: 'ada@recipient.test',
      subject: 'Hello',
      html: '<p>Hi</p>',
    });
    assert.equal(answer.code, 107);
    assert.deepEqual(
      answer.details?.map((detail) => detail.field),
      ['html', 'content'],
    );
    assert.equal(
      answer.details?.[0]?.message,
      'Unknown field "html": the HTML body goes in content: {"kind":"html_only","html":…}',
    );
    assert.match(answer.details?.[1]?.message ?? '', /\{"kind":"html_only","html":…\}/);
  });

  it('html and text together are pointed at mixed; a top-level text at text_only', () => {
    const both = check(messageAddRequest, {
      message_sender: sender,
      to: ['a@b.test'],
      html: '<p>x</p>',
      text: 'x',
    });
    assert.match(both.details?.find((detail) => detail.field === 'html')?.message ?? '', /"kind":"mixed"/);
    const textOnly = check(messageAddRequest, { message_sender: sender, to: ['a@b.test'], text: 'x' });
    assert.match(
      textOnly.details?.find((detail) => detail.field === 'text')?.message ?? '',
      /the text body goes in content: \{"kind":"text_only","text":…\}/,
    );
  });

  it('a Postmark-shaped body (HtmlBody, TextBody, From, To, Subject) names each field to use', () => {
    const answer = check(messageAddRequest, {
      From: sender,
      To: 'a@b.test',
      Subject: 'Hello',
      HtmlBody: '<p>x</p>',
      MessageStream: 'outbound',
    });
    const byField = Object.fromEntries(
      (answer.details ?? []).map((detail) => [detail.field, detail.message]),
    );
    assert.match(byField.From ?? '', /use from/);
    assert.match(byField.To ?? '', /use to/);
    assert.match(byField.Subject ?? '', /use subject/);
    assert.match(byField.HtmlBody ?? '', /content: \{"kind":"html_only","html":…\}/);
    assert.equal(byField.MessageStream, 'Unknown field "MessageStream"');
  });

  it('one address where a list is expected is a list of one, in add and in batch', () => {
    const added = check(messageAddRequest, {
      message_sender: sender,
      from: `App <${sender}>`,
      to: 'ada@recipient.test',
      cc: { email: 'bob@recipient.test', name: 'Bob' },
      reply_to: 'help@example.test',
      subject: 'Hello',
      content: text,
    });
    assert.deepEqual(added.value?.to, [{ email: 'ada@recipient.test' }]);
    assert.deepEqual(added.value?.from, [{ email: sender, name: 'App' }]);
    assert.deepEqual(added.value?.cc, [{ email: 'bob@recipient.test', name: 'Bob' }]);
    assert.deepEqual(added.value?.reply_to, [{ email: 'help@example.test' }]);
    const batch = check(messageBatchRequest, {
      messages: [{ message_sender: sender, to: 'ada@recipient.test', subject: 'x', content: text }],
    });
    assert.deepEqual((batch.value?.messages as { to: unknown }[] | undefined)?.[0]?.to, [
      { email: 'ada@recipient.test' },
    ]);
  });

  it('one invalid address on its own is reported as an address (10000001), not as "not a list"', () => {
    const answer = check(messageAddRequest, { message_sender: sender, to: 'not an address', content: text });
    assert.equal(answer.code, 10000001);
    assert.deepEqual(
      answer.details?.map((detail) => detail.field),
      ['to'],
    );
    const wrongType = check(messageAddRequest, { message_sender: sender, to: 42, content: text });
    assert.deepEqual(wrongType.details, [
      { field: 'to', message: 'to must be an address or a list of addresses' },
    ]);
  });

  it('send_at without an offset says the offset is missing, with the value to send', () => {
    const answer = check(messageAddRequest, {
      message_sender: sender,
      to: ['a@b.test'],
      content: text,
      scheduling: { mode: 'scheduled', send_at: '2026-12-01T10:00:00' },
    });
    assert.deepEqual(answer.details, [
      {
        field: 'scheduling.send_at',
        message:
          'send_at has no time-zone offset: add one, e.g. "2026-12-01T10:00:00Z" (UTC) or "2026-12-01T10:00:00+01:00"',
      },
    ]);
    const garbage = check(messageAddRequest, {
      message_sender: sender,
      to: ['a@b.test'],
      content: text,
      scheduling: { mode: 'scheduled', send_at: 'tomorrow' },
    });
    assert.match(garbage.details?.[0]?.message ?? '', /must be ISO 8601 with an offset/);
  });

  it('an unknown webhook event name lists the valid names', () => {
    const answer = check(webhookAddRequest, {
      url: 'https://hooks.example.com/x',
      events: ['message.delivered', 'opened'],
    });
    assert.equal(answer.code, 107);
    assert.deepEqual(answer.details, [
      {
        field: 'events[1]',
        message: `"opened" is not an event type; the types are ${webhookEventTypes.join(', ')}`,
      },
    ]);
  });

  it('a sender domain that is not the caller’s says how a domain is added', () => {
    const message = notYourDomainMessage('shop.example', 'acme');
    assert.match(message, /^shop\.example is not one of your sending domains/);
    assert.match(message, /npm run admin -- domains add shop\.example --account acme/);
    assert.match(message, /SEED_DOMAINS=shop\.example=acme/);
  });
});
