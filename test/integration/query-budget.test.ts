import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, it } from 'vitest';
import { dueAtIso } from '../../shared/delivery/store/message-delivery.ts';
import { listMessages } from '../../shared/messages/query.ts';
import { messageIndexAttributes } from '../../shared/messages/store/message-index.ts';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { chunkSize, workBudget } from '../../shared/platform/paging/merge.ts';
import { keys, shardCount } from '../../shared/platform/table/keys.ts';
import { putTestMessage } from '../support/delivery.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

/**
 * A filtered query over a large backlog answers within its work budget. The accepted listing lane
 * holds `queued`, `processing`, `sent` and `delivered` messages together, and a `status: queued`
 * filter reads and drops every `processing` entry in its way; before the budget, a backlog of them made one request loop until
 * the function timed out. Now each page stops at its budget and answers what it has (possibly
 * nothing) with a cursor, and following the cursors shows every queued message exactly once.
 */
useHostEnvironment();

const backlog = Number(process.env.QUERY_BACKLOG ?? 1_500);
const account = uniqueAccount('budget');
const domain = uniqueDomain('budget');
const written: string[] = [];

/** `count` messages in `processing`, newer than everything else of the account, written 25 at a time. */
async function writeBacklog(count: number): Promise<void> {
  const createdFrom = Date.now() + 1_000;
  const far = dueAtIso(Date.now() + 24 * 3600 * 1000);
  for (let start = 0; start < count; start += 25) {
    const items = Array.from({ length: Math.min(25, count - start) }, (_, offset) => {
      const uuid = randomUUID();
      written.push(uuid);
      const createdAt = new Date(createdFrom + start + offset).toISOString();
      return {
        ...keys.message(uuid),
        message_uuid: uuid,
        account_id: account,
        tenant: domain,
        status: 'processing',
        recipients: [{ email: 'reader@example.net', kind: 'to', status: 'pending', updated_at: createdAt }],
        history: [{ status: 'processing', at: createdAt }],
        created_at: createdAt,
        updated_at: createdAt,
        // Held by a live lease far ahead: no sender or dispatcher touches them during the test.
        lease_until: Date.now() + 24 * 3600 * 1000,
        due_at: far,
        ...messageIndexAttributes({
          message_uuid: uuid,
          account_id: account,
          created_at: createdAt,
          status: 'processing',
          watch_at: far,
        }),
      };
    });
    let request: Record<string, unknown[]> | undefined = {
      [tableName()]: items.map((Item) => ({ PutRequest: { Item } })),
    };
    while (request !== undefined && Object.keys(request).length > 0) {
      const result = await dynamo().send(new BatchWriteCommand({ RequestItems: request as never }));
      request = result.UnprocessedItems as typeof request;
    }
  }
}

afterAll(async () => {
  for (let start = 0; start < written.length; start += 25) {
    await dynamo().send(
      new BatchWriteCommand({
        RequestItems: {
          [tableName()]: written
            .slice(start, start + 25)
            .map((uuid) => ({ DeleteRequest: { Key: keys.message(uuid) } })),
        },
      }),
    );
  }
});

describe('the work budget of a filtered query', () => {
  it(`a status filter over ${backlog} entries of another status answers short pages with cursors, never skipping or repeating`, async () => {
    // Three queued messages (never due, never queued), older than the backlog.
    const queued: string[] = [];
    for (let index = 0; index < 3; index++) {
      const uuid = await putTestMessage({
        account,
        domain,
        to: ['reader@example.net'],
        status: 'queued',
        dueAtMs: Date.now() + 24 * 3600 * 1000,
      });
      queued.push(uuid);
      written.push(uuid);
    }
    await writeBacklog(backlog);

    // The first page, in this process: it ends at its budget, before the queued messages.
    const limit = 100;
    const streams = shardCount.account;
    const first = await listMessages(account, { status: 'queued', limit }, undefined);
    assert.equal(first.budgetReached, true);
    assert.ok(
      first.scannedCount <= workBudget(limit, streams) + streams * chunkSize(limit, streams),
      `evaluated ${first.scannedCount}`,
    );
    assert.ok(first.count < queued.length, 'a short page');
    assert.notEqual(first.next_cursor, null);

    // Through the API: every page answers (no timeout, no 5xx); the cursors reach every queued
    // message exactly once, newest first, and then end.
    const token = await mintToken({ account });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await call('POST', '/message/query-1.0', {
        token,
        body: { filters: { status: 'queued', limit }, ...(cursor === undefined ? {} : { cursor }) },
      });
      assert.equal(response.status, 200, response.text);
      assert.ok(response.body.data.count <= limit);
      seen.push(
        ...response.body.data.messages.map((message: { message_uuid: string }) => message.message_uuid),
      );
      cursor = response.body.data.next_cursor ?? undefined;
      pages += 1;
    } while (cursor !== undefined && pages < 50);
    assert.equal(cursor, undefined, 'the pages end');
    assert.deepEqual(seen, [...queued].reverse());
    // Each page but the last stops at its budget, so the pages number about backlog ÷ budget.
    assert.ok(
      pages >= 2 && pages <= Math.ceil(backlog / (workBudget(limit, streams) / 2)) + 2,
      `${pages} pages`,
    );
  });
});
