import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { tableDefinition } from '../../infra/resources/definitions.ts';
import { messageStatuses } from '../../shared/messages/model/statuses.ts';
import { messageIndexAttributes, searchEntriesOf } from '../../shared/messages/store/message-index.ts';
import { keys, shardCount } from '../../shared/platform/table/keys.ts';
import { webhookKeys } from '../../shared/webhooks/store/webhooks.ts';

/**
 * No request-path or delivery-path write may use a partition key shared by every message (a hot
 * partition such as a constant `DUE`): DynamoDB takes at most 1,000 write units per second per
 * partition key, so such a key caps the whole service. The index attributes are generated from the
 * key builders themselves, for many accounts and items, and their partition keys are counted.
 *
 * Adding an item type (suppression entries, webhook endpoints and events …): add one entry to
 * `writers` that returns the index attributes one write of that type produces.
 */
interface Writer {
  name: string;
  /**
   * `message`: written for every message on the request or delivery path (at up to the service's
   * rate), checked across accounts and within one account; `occasional`: written by operators or
   * for a fraction of messages (domains, suppression entries on a bounce or complaint), checked
   * across accounts only.
   */
  path: 'message' | 'occasional';
  /** The index attributes (`gsi<N>pk`, …) that item number `n` of `account` is written with. */
  write(account: string, n: number): Array<Record<string, string | undefined>>;
}

const sendAt = '2026-12-01T10:00:00.000Z';
const createdAt = (n: number) => new Date(Date.UTC(2026, 10, 23, 10) + n * 7).toISOString();

const writers: Writer[] = [
  {
    // Every status a message passes through is written once (add, sender, dispatcher, events).
    name: 'message (every status)',
    path: 'message',
    write: (account, n) => {
      const uuid = randomUUID();
      return messageStatuses.map((status) => ({
        ...messageIndexAttributes({
          message_uuid: uuid,
          account_id: account,
          created_at: createdAt(n),
          status,
          send_at: sendAt,
          due_at: sendAt,
          watch_at: sendAt,
        }),
      }));
    },
  },
  {
    // Every event of every message of an account reaches each of its subscribed endpoints: one
    // attempt record per event and endpoint (a table partition, counted like an index key).
    name: 'webhook delivery attempt',
    path: 'message',
    write: (account, n) =>
      ['message.sent', 'message.delivered'].map((type) => ({
        pk: webhookKeys.attemptPartition(`wh-${account}`, `evt-${account}-${n}-${type}-${randomUUID()}`),
      })),
  },
  {
    // The worst case for the search entries: every message of an account to the same recipient,
    // with the same tag and metadata pair; they spread over the account's shards, like gsi2.
    name: 'search entries (the same terms on every message)',
    path: 'message',
    write: (account, n) =>
      searchEntriesOf({
        message_uuid: randomUUID(),
        account_id: account,
        created_at: createdAt(n),
        recipients: [{ email: 'Same@Example.net' }, { email: 'same@example.net' }],
        tags: [{ name: 'category', value: 'receipt' }],
        metadata: { plan: 'pro' },
      }).map((entry) => ({ pk: entry.pk })),
  },
  {
    name: 'domain',
    path: 'occasional',
    write: (account, n) => [{ gsi1pk: keys.domainsOfAccount(account), gsi1sk: `d${n}.example` }],
  },
  {
    // A hard bounce, a complaint or an add puts one address on the account's list.
    name: 'suppression entry',
    path: 'occasional',
    write: (account, n) => [
      {
        suppressions_pk: keys.suppressionsOfAccount(account),
        suppressions_sk: keys.suppressionsSortKey('hard_bounce', createdAt(n), `r${n}@example.net`),
      },
    ],
  },
];

/**
 * Every index's partition-key attribute, from the table definition the stack and the host use, and
 * the table's own `pk` for writers whose records share a partition (webhook attempts).
 */
const indexPartitionKeys = new Set<string>([
  ...tableDefinition.indexes.map((index) => index.partitionKey),
  'pk',
]);

/**
 * Counts, per index partition-key attribute, how many writes each key value receives, and how many
 * writes set that attribute at all (the share of the busiest key is taken among those).
 */
function partitionCounts(accounts: string[], perAccount: number, writer: Writer) {
  const counts = new Map<string, Map<string, number>>();
  const writes = new Map<string, number>();
  for (const account of accounts) {
    for (let n = 0; n < perAccount; n++) {
      for (const attributes of writer.write(account, n)) {
        for (const [name, value] of Object.entries(attributes)) {
          if (!indexPartitionKeys.has(name) || value === undefined) continue;
          const perKey = counts.get(name) ?? new Map<string, number>();
          perKey.set(value, (perKey.get(value) ?? 0) + 1);
          counts.set(name, perKey);
          writes.set(name, (writes.get(name) ?? 0) + 1);
        }
      }
    }
  }
  return { counts, writes };
}

const busiest = (perKey: Map<string, number>) => Math.max(...perKey.values());

describe('partition keys of every write', () => {
  for (const writer of writers) {
    it(`${writer.name}: no index partition key is shared by the writes of many accounts`, () => {
      const accounts = Array.from(
        { length: 400 },
        (_, index) => `account-${index}-${randomUUID().slice(0, 6)}`,
      );
      const { counts, writes: writesOf } = partitionCounts(accounts, 5, writer);
      for (const [attribute, perKey] of counts) {
        const top = busiest(perKey);
        const writes = writesOf.get(attribute) ?? 0;
        // A constant key would take every write; sharded keys take about 1/shards of them.
        assert.ok(
          top <= writes * 0.1,
          `${attribute}: one key takes ${top} of ${writes} writes (${[...perKey].sort((a, b) => b[1] - a[1])[0]?.[0]})`,
        );
        assert.ok(perKey.size > 1, `${attribute}: a single key for every write`);
      }
    });

    if (writer.path !== 'message') continue;
    it(`${writer.name}: one account's writes spread over ${shardCount.account} shards or more`, () => {
      const { counts, writes } = partitionCounts([`busy-${randomUUID()}`], 2000, writer);
      for (const [attribute, perKey] of counts) {
        const top = busiest(perKey);
        const share = top / (writes.get(attribute) ?? 1);
        assert.ok(
          share <= 1 / shardCount.account + 0.05,
          `${attribute}: one key takes ${(share * 100).toFixed(1)} % of one account's writes`,
        );
      }
    });
  }

  it('a message is on every index under keys of its own account or a shard, never a constant', () => {
    const uuid = randomUUID();
    for (const status of messageStatuses) {
      const attributes = messageIndexAttributes({
        message_uuid: uuid,
        account_id: 'acct',
        created_at: createdAt(0),
        status,
        send_at: sendAt,
        watch_at: sendAt,
      });
      for (const [name, value] of Object.entries(attributes)) {
        if (!name.endsWith('pk') || value === undefined) continue;
        assert.match(value, /#(acct#.*\d|\d+)$/, `${status}: ${name} = ${value}`);
      }
    }
  });
});
