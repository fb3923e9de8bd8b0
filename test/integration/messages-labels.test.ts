import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { MessageCancelledEvent, MessageEvent, WebhookEvent } from '../../clients/svc-mail.ts';
import { waitForStatus } from '../support/delivery.ts';
import { call } from '../support/host.ts';
import { add, newAccount, query, type TestAccount, textMessage } from '../support/messages.ts';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.ts';

/**
 * Tags and metadata (docs/messages.md, "Tags and metadata"): accepted on add and in a batch, stored
 * with the message, shown by query by uuid, and carried in every webhook event of the message, as a
 * real HTTP receiver sees it (typed as the typed client exports the bodies; the receiver checks each
 * body against `WebhookEvent` in docs/openapi.json). Anything outside the rules is 107 with a detail
 * naming the field.
 */
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const tags = [
  { name: 'category', value: 'password-reset' },
  { name: 'flow-v2', value: 'A_b-9' },
];
const metadata = { user_id: 'u-1029', 'order.id': '4711', note: 'Grüße, ünïcödé & "quotes"' };

async function hook(who: TestAccount, path: string): Promise<void> {
  const response = await call('POST', '/webhook/add-1.0', {
    token: who.token,
    body: { url: `${receiver.url}${path}` },
  });
  assert.equal(response.status, 200, response.text);
}

/** The message events received on `path`, with the typed client's types. */
const bodiesOn = (path: string): Array<MessageEvent | MessageCancelledEvent> =>
  receiver.received
    .filter((request: ReceivedWebhook) => request.path === path)
    .map((request) => JSON.parse(request.body) as WebhookEvent)
    .filter((event): event is MessageEvent | MessageCancelledEvent => event.type.startsWith('message.'));

describe('tags and metadata', () => {
  it('round-trip through add, query by uuid and every webhook event of the message', async () => {
    const who = await newAccount('labels');
    const path = `/labels-${who.account}`;
    await hook(who, path);
    const sent = await add(who, textMessage(who, { to: ['ok@recipient.test'], tags, metadata }));
    assert.equal(sent.status, 200, sent.text);
    const uuid = sent.body.data.message_uuid as string;
    assert.deepEqual(Object.keys(sent.body.data).sort(), ['message_uuid', 'status']);

    const details = await waitForStatus(who.token, uuid, ['delivered']);
    assert.deepEqual(details.tags, tags);
    assert.deepEqual(details.metadata, metadata);

    // A held message that is cancelled: its one event carries them too.
    const held = await add(who, textMessage(who, { tags: [tags[0]], scheduling: { mode: 'manual-wait' } }));
    const heldUuid = held.body.data.message_uuid as string;
    const cancel = await add(who, { scheduling: { mode: 'manual-cancel', message_uuid: heldUuid } });
    assert.equal(cancel.status, 200, cancel.text);

    await receiver.waitFor(() => bodiesOn(path).length >= 3);
    const events = bodiesOn(path);
    const ofSent = events.filter((event) => event.data.message_uuid === uuid);
    assert.deepEqual(ofSent.map((event) => event.type).sort(), ['message.delivered', 'message.sent']);
    for (const event of ofSent) {
      assert.deepEqual(event.data.tags, tags);
      assert.deepEqual(event.data.metadata, metadata);
    }
    const ofHeld = events.filter((event) => event.data.message_uuid === heldUuid);
    assert.deepEqual(
      ofHeld.map((event) => [event.type, event.data.tags, event.data.metadata]),
      [['message.cancelled', [tags[0]], {}]],
    );
    // Every body matched the published schema, labels included (waitFor would have thrown).
    assert.deepEqual(receiver.contractProblems, []);
  });

  it('a message without labels shows and sends empty ones', async () => {
    const who = await newAccount('labels');
    const path = `/bare-${who.account}`;
    await hook(who, path);
    const sent = await add(who, textMessage(who, { to: ['ok@recipient.test'] }));
    const uuid = sent.body.data.message_uuid as string;
    const details = await waitForStatus(who.token, uuid, ['delivered']);
    assert.deepEqual([details.tags, details.metadata], [[], {}]);
    await receiver.waitFor(() => bodiesOn(path).length >= 2);
    for (const event of bodiesOn(path)) assert.deepEqual([event.data.tags, event.data.metadata], [[], {}]);
  });

  it('accepts the limits exactly: 10 tags of 256 characters, 10 metadata keys of 40 with values of 500', async () => {
    const who = await newAccount('labels');
    const long = (char: string, length: number) => char.repeat(length);
    const manyTags = Array.from({ length: 10 }, (_, index) => ({
      name: `${index}${long('n', 255)}`,
      value: long('V', 256),
    }));
    const manyMetadata = Object.fromEntries(
      Array.from({ length: 10 }, (_, index) => [`${index}${long('k', 39)}`, long('€', 500)]),
    );
    const response = await add(
      who,
      textMessage(who, { tags: manyTags, metadata: manyMetadata, scheduling: { mode: 'manual-wait' } }),
    );
    assert.equal(response.status, 200, response.text);
    const details = await query(who, { message_uuid: response.body.data.message_uuid });
    assert.deepEqual(details.body.data.tags, manyTags);
    assert.deepEqual(details.body.data.metadata, manyMetadata);
    const empty = await add(
      who,
      textMessage(who, { metadata: { blank: '' }, scheduling: { mode: 'manual-wait' } }),
    );
    assert.equal(empty.status, 200, 'an empty metadata value is a value');
  });

  it('refuses invalid tags and metadata with 107 and a detail for each problem', async () => {
    const who = await newAccount('labels');
    const eleven = Array.from({ length: 11 }, (_, index) => ({ name: `t${index}`, value: 'v' }));
    const elevenKeys = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`k${index}`, 'v']));
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['too many tags', { tags: eleven }, 'tags', /At most 10 tags/],
      ['tag name too long', { tags: [{ name: 'n'.repeat(257), value: 'v' }] }, 'tags[0].name', /256/],
      ['tag value too long', { tags: [{ name: 'n', value: 'v'.repeat(257) }] }, 'tags[0].value', /256/],
      ['space in a tag value', { tags: [{ name: 'n', value: 'a b' }] }, 'tags[0].value', /A-Z a-z 0-9 _ -/],
      ['dot in a tag name', { tags: [{ name: 'a.b', value: 'v' }] }, 'tags[0].name', /A-Z a-z 0-9 _ -/],
      ['empty tag value', { tags: [{ name: 'n', value: '' }] }, 'tags[0].value', /empty/],
      ['number as tag value', { tags: [{ name: 'n', value: 7 }] }, 'tags[0].value', /string/],
      ['tag without value', { tags: [{ name: 'n' }] }, 'tags[0].value', /required/],
      ['tag with an extra field', { tags: [{ name: 'n', value: 'v', x: 1 }] }, 'tags[0].x', /Unknown field/],
      [
        'tag name given twice',
        {
          tags: [
            { name: 'n', value: 'a' },
            { name: 'n', value: 'b' },
          ],
        },
        'tags[1].name',
        /twice/,
      ],
      [
        'reserved tag name',
        { tags: [{ name: 'message_uuid', value: 'x' }] },
        'tags[0].name',
        /set by the service/,
      ],
      ['tags not a list', { tags: { name: 'n', value: 'v' } }, 'tags', /list/],
      ['too many metadata keys', { metadata: elevenKeys }, 'metadata', /At most 10 metadata keys/],
      [
        'metadata key too long',
        { metadata: { ['k'.repeat(41)]: 'v' } },
        `metadata.${'k'.repeat(41)}`,
        /1–40/,
      ],
      ['space in a metadata key', { metadata: { 'a b': 'v' } }, 'metadata.a b', /A-Z a-z 0-9 _ \. -/],
      // An empty key is named by its (empty) path segment after `metadata`.
      ['empty metadata key', { metadata: { '': 'x' } }, 'metadata.', /1–40/],
      ['number as metadata value', { metadata: { n: 7 } }, 'metadata.n', /must be a string/],
      ['object as metadata value', { metadata: { n: { deep: 'x' } } }, 'metadata.n', /must be a string/],
      ['null as metadata value', { metadata: { n: null } }, 'metadata.n', /must be a string/],
      ['metadata value too long', { metadata: { n: 'v'.repeat(501) } }, 'metadata.n', /500/],
      ['metadata as a list', { metadata: ['a'] }, 'metadata', /object/],
    ];
    for (const [name, extra, field, message] of cases) {
      const response = await add(who, textMessage(who, { ...extra, scheduling: { mode: 'manual-wait' } }));
      assert.equal(response.status, 406, `${name}: ${response.text}`);
      assert.equal(response.body.error.code, 107, name);
      const detail = response.body.error.details.find((entry: any) => entry.field === field);
      assert.ok(detail !== undefined, `${name}: no detail for ${field} in ${response.text}`);
      assert.match(detail.message, message, name);
    }
    // Several problems at once: one detail each.
    const several = await add(
      who,
      textMessage(who, {
        tags: [{ name: 'a b', value: '' }],
        metadata: { 'bad key': 'v', n: 1 },
      }),
    );
    assert.deepEqual(several.body.error.details.map((detail: any) => detail.field).sort(), [
      'metadata.bad key',
      'metadata.n',
      'tags[0].name',
      'tags[0].value',
    ]);
    // Release and cancel carry no labels (they act on a message that has its own).
    const release = await add(who, {
      tags,
      scheduling: { mode: 'manual-send', message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e' },
    });
    assert.equal(release.body.error.code, 107);
    assert.deepEqual(
      release.body.error.details.map((detail: any) => detail.field),
      ['tags'],
    );
    // Nothing was stored by any of them.
    const listed = await query(who, { filters: {} });
    assert.equal(listed.body.data.count, 0);
  });
});
