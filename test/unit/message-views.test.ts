import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import {
  boundedEntry,
  clipDetail,
  detailsView,
  detailView,
  type MessageItem,
  maxDetailLength,
  objectKeys,
  objectKeysOf,
  recipientsOf,
  sortKeyOf,
  summaryView,
} from '../../shared/messages/model/message.ts';
import { formatDate } from '../../shared/platform/time/format.ts';

const uuid = '0b3c6a52-8f0e-4d8b-9a51-2b7c1f3e9d10';
const at = '2026-11-24T08:15:00.000Z';
const later = '2026-11-24T08:15:02.000Z';

function item(overrides: Partial<MessageItem> = {}): MessageItem {
  return {
    message_uuid: uuid,
    account_id: 'acct',
    tenant: 'example.test',
    message_sender: 'noreply@example.test',
    from: [{ email: 'noreply@example.test', name: 'Shop' }],
    to: [{ email: 'ada@example.org' }],
    cc: [],
    bcc: [{ email: 'audit@example.org' }],
    reply_to: [{ email: 'help@example.test' }],
    subject: 'Your order',
    content_kind: 'text_only',
    headers: { 'X-Order': '4711' },
    tags: [{ name: 'category', value: 'receipt' }],
    metadata: { order_id: '4711' },
    content: { store: 'item' },
    attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 3, offset: 0 }],
    scheduling: { mode: 'scheduled', send_at: at },
    status: 'bounced',
    recipients: [
      {
        email: 'ada@example.org',
        name: 'Ada',
        kind: 'to',
        status: 'bounced',
        detail: '550 no',
        updated_at: later,
      },
      { email: 'audit@example.org', kind: 'bcc', status: 'delivered', updated_at: later },
    ],
    history: [
      { status: 'queued', at, detail: `released by the scheduler for ${at}` },
      { status: 'bounced', at: later, recipient: 'ada@example.org', detail: 'ada@example.org: 550 no' },
    ],
    created_at: at,
    updated_at: later,
    attempts: 1,
    ...overrides,
  };
}

describe('the views of a stored message', () => {
  it('query by uuid shows every field but the bodies, dates in the server time zone, names only when given', () => {
    const view = detailsView(item());
    assert.equal(view.message_uuid, uuid);
    assert.deepEqual(view.from, [{ email: 'noreply@example.test', name: 'Shop' }]);
    assert.deepEqual(view.reply_to, [{ email: 'help@example.test' }]);
    assert.deepEqual(
      view.recipients.map((recipient) => [recipient.email, recipient.name, recipient.kind, recipient.status]),
      [
        ['ada@example.org', 'Ada', 'to', 'bounced'],
        ['audit@example.org', undefined, 'bcc', 'delivered'],
      ],
    );
    assert.equal(view.recipients[0]?.updated_at, formatDate(later));
    assert.equal('detail' in (view.recipients[1] ?? {}), false);
    assert.deepEqual(view.tags, [{ name: 'category', value: 'receipt' }]);
    assert.deepEqual(view.metadata, { order_id: '4711' });
    assert.deepEqual(view.attachments, [{ filename: 'a.pdf', content_type: 'application/pdf', size: 3 }]);
    assert.deepEqual(view.scheduling, { mode: 'scheduled', send_at: formatDate(at) });
    assert.equal(view.status_history[0]?.detail, `released by the scheduler for ${formatDate(at)}`);
    assert.equal(view.created_at, formatDate(at));
    assert.equal('template' in view, false);
  });

  it('defaults what the stored item leaves out, and shows the template when there is one', () => {
    const bare = item({ tags: undefined, metadata: undefined, scheduling: { mode: 'immediate' } });
    const template = { alias: 'receipt', version: 3 };
    const view = detailsView({ ...bare, template });
    assert.deepEqual(view.tags, []);
    assert.deepEqual(view.metadata, {});
    assert.deepEqual(view.scheduling, { mode: 'immediate' });
    assert.deepEqual(view.template, template);
  });

  it('a list entry counts the recipients and names the first two', () => {
    const view = summaryView(item());
    assert.equal(view.recipients_count, 2);
    assert.equal(view.subject, 'Your order');
    assert.equal(view.recipients.length, 2);
    const many = item();
    many.recipients = [...(many.recipients ?? []), ...(many.recipients ?? [])];
    assert.equal(summaryView(many).recipients.length, 2, 'never more than two');
    assert.equal(view.updated_at, formatDate(later));
  });

  it('a detail keeps text that is not a UTC timestamp as it is', () => {
    assert.equal(detailView('250 2.0.0 Ok: queued as 4F3A'), '250 2.0.0 Ok: queued as 4F3A');
  });
});

describe('the keys and bounds of a stored message', () => {
  it('lists the content object and each stored download', () => {
    const s3 = { store: 's3' as const, key: objectKeys.content(uuid) };
    assert.deepEqual(objectKeysOf({ message_uuid: uuid, content: { store: 'item' } }), []);
    assert.deepEqual(objectKeysOf({ message_uuid: uuid, content: s3, downloads: 2 }), [
      `messages/${uuid}/content`,
      `messages/${uuid}/download/message.eml`,
      `messages/${uuid}/download/attachment-1`,
    ]);
    assert.equal(objectKeys.prefix(uuid), `messages/${uuid}/`);
  });

  it('recipients are to, then cc, then bcc, each pending', () => {
    const recipients = recipientsOf(
      { to: [{ email: 'a@x.test' }], cc: [{ email: 'b@x.test' }], bcc: [{ email: 'c@x.test' }] },
      at,
    );
    assert.deepEqual(
      recipients.map((recipient) => [
        recipient.email,
        recipient.kind,
        recipient.status,
        recipient.updated_at,
      ]),
      [
        ['a@x.test', 'to', 'pending', at],
        ['b@x.test', 'cc', 'pending', at],
        ['c@x.test', 'bcc', 'pending', at],
      ],
    );
    assert.equal(sortKeyOf({ created_at: at, message_uuid: uuid }), `${at}#${uuid}`);
  });

  it('clips long details with an ellipsis and leaves short ones alone', () => {
    const long = 'x'.repeat(maxDetailLength + 50);
    const clipped = clipDetail(long);
    assert.equal(clipped.length, maxDetailLength);
    assert.ok(clipped.endsWith('…'));
    assert.equal(clipDetail('short'), 'short');
    assert.equal(clipDetail(undefined), undefined);
    const entry = { status: 'failed' as const, at };
    assert.equal(boundedEntry(entry), entry);
    assert.equal(boundedEntry({ ...entry, detail: long }).detail, clipped);
  });
});
