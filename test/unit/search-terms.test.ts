import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { tagListProblems } from '../../shared/messages/model/labels.ts';
import { recipientTerm, termDigest, termsOf } from '../../shared/messages/model/terms.ts';
import { messageAddRequest, messageFilters } from '../../shared/messages/schemas.ts';
import { contentKeyOf, searchEntriesOf } from '../../shared/messages/store/message-index.ts';

describe('search terms of a message', () => {
  const message = {
    message_uuid: '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e',
    account_id: 'acct',
    created_at: '2026-11-24T10:00:00.000Z',
    recipients: [{ email: 'Joe@Example.org' }, { email: 'ada@example.org' }, { email: 'JOE@example.org' }],
    tags: [{ name: 'category', value: 'reset' }],
    metadata: { user: 'u=1', 'order.id': '4711' },
  };

  it('one term per distinct recipient (case-insensitive), tag pair and metadata pair, recipients first', () => {
    assert.deepEqual(
      termsOf(message).map((term) => [term.kind, term.text]),
      [
        ['recipient', 'joe@example.org'],
        ['recipient', 'ada@example.org'],
        ['tag', 'category=reset'],
        ['metadata', 'user=u=1'],
        ['metadata', 'order.id=4711'],
      ],
    );
  });

  it('keys: fixed-length digests, the message shard, the creation sort key; the content item is the first', () => {
    const entries = searchEntriesOf(message);
    assert.equal(entries.length, 5);
    assert.equal(new Set(entries.map((entry) => entry.pk)).size, 5);
    for (const entry of entries) {
      assert.match(entry.pk, /^TERM#acct#[A-Za-z0-9_-]{22}#[0-3]$/);
      assert.equal(entry.sk, `${message.created_at}#${message.message_uuid}`);
    }
    assert.deepEqual(contentKeyOf(message), entries[0]);
    assert.equal(entries[0]?.pk.split('#')[2], termDigest(recipientTerm('joe@EXAMPLE.org')));
    // A kind is part of the digest: a tag and a metadata pair with the same text are distinct terms.
    assert.notEqual(termDigest({ kind: 'tag', text: 'a=b' }), termDigest({ kind: 'metadata', text: 'a=b' }));
  });

  it('tag lists: a repeated or reserved name is a problem of that tag; malformed tags are left to the schema', () => {
    assert.deepEqual(
      tagListProblems([
        { name: 'a', value: '1' },
        { name: 'a', value: '2' },
        { name: 'message_uuid', value: 'x' },
        null,
        7,
      ]),
      [
        { index: 1, message: 'The tag name "a" is given twice; a name appears once' },
        { index: 2, message: 'The tag name "message_uuid" is set by the service' },
      ],
    );
  });

  it('schemas: tags and metadata on add; one metadata pair and an address in the filters', () => {
    const base = {
      message_sender: 'a@b.example',
      to: ['c@d.example'],
      content: { kind: 'text_only', text: 'x' },
    };
    const ok = messageAddRequest['~standard'].validate({
      ...base,
      tags: [{ name: 'a', value: 'b' }],
      metadata: { k: '' },
    });
    assert.equal((ok as { issues?: unknown }).issues, undefined);
    const filters = (value: unknown) =>
      (
        (messageFilters['~standard'].validate(value) as { issues?: Array<{ path: PropertyKey[] }> }).issues ??
        []
      ).map((issue) => issue.path.join('.'));
    assert.deepEqual(
      filters({ metadata: { a: '1' }, tag: { name: 'a', value: 'b' }, recipient: 'X@Y.example' }),
      [],
    );
    assert.deepEqual(filters({ metadata: { a: '1', b: '2' } }), ['metadata']);
    assert.deepEqual(filters({ tag: { name: 'a b', value: 'v' } }), ['tag.name']);
  });
});
