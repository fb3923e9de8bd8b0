import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import {
  type BatchClaim,
  claimBatchKey,
  finishBatch,
  getBatchRecord,
  readBatchResults,
  releaseBatch,
  takeOverBatch,
} from '../../shared/messages/store/batch-records.ts';
import { uniqueAccount, useHostEnvironment } from '../support/host.ts';

/**
 * The idempotency record of a batch against DynamoDB Local (docs/data-model.md, "Idempotency
 * record"): who holds it and until when, who may finish or take it over, and results of any size.
 */
function claimOf(holder: string, leaseUntil: number, key = `k-${randomUUID()}`): BatchClaim {
  const now = new Date();
  return {
    key,
    bodyHash: 'hash-of-the-body',
    createdAt: now.toISOString(),
    holder,
    leaseUntil,
    expiresAt: Math.floor(now.getTime() / 1000) + 3600,
    now,
  };
}

describe('batch idempotency records', () => {
  it('one claim per key; only its holder finishes it; another account never sees it', async () => {
    useHostEnvironment();
    const account = uniqueAccount('records');
    const first = claimOf('holder-a', Date.now() + 60_000);
    assert.deepEqual(
      await claimBatchKey(account, first, [{ index: 0, message_uuid: 'u', status: 'queued' }]),
      {
        claimed: true,
      },
    );
    const second = await claimBatchKey(
      account,
      { ...claimOf('holder-b', Date.now() + 60_000), key: first.key },
      [],
    );
    assert.equal(second.claimed, false);
    assert.equal(second.claimed === false && second.record?.holder, 'holder-a', 'the first claim stays');

    const record = await getBatchRecord(account, first.key, new Date());
    assert.deepEqual(record && [record.kind, record.state, record.holder, record.bodyHash, record.chunks], [
      'batch',
      'pending',
      'holder-a',
      'hash-of-the-body',
      1,
    ]);
    assert.deepEqual(await readBatchResults(account, first.key, record as never), [
      { index: 0, message_uuid: 'u', status: 'queued' },
    ]);
    assert.equal(await getBatchRecord(uniqueAccount('other'), first.key, new Date()), undefined);

    // Nobody takes over a live lease; a stranger cannot finish it; its holder can.
    assert.equal(
      await takeOverBatch(account, first.key, record as never, 'holder-b', Date.now() + 60_000, Date.now()),
      false,
    );
    assert.equal(await finishBatch(account, first.key, 'holder-b'), false);
    assert.equal(await finishBatch(account, first.key, 'holder-a'), true);
    assert.equal((await getBatchRecord(account, first.key, new Date()))?.state, 'done');
    assert.equal(
      await releaseBatch(account, first.key, 'holder-a'),
      false,
      'a done batch has no lease to give up',
    );
  });

  it('a lapsed or released lease is taken over by exactly one retry', async () => {
    useHostEnvironment();
    const account = uniqueAccount('records');
    const lapsed = claimOf('dead', Date.now() - 1);
    await claimBatchKey(account, lapsed, []);
    const seen = (await getBatchRecord(account, lapsed.key, new Date())) as never;
    const takers = await Promise.all(
      ['r1', 'r2', 'r3'].map((holder) =>
        takeOverBatch(account, lapsed.key, seen, holder, Date.now() + 60_000, Date.now()),
      ),
    );
    assert.equal(takers.filter(Boolean).length, 1);
    const winner = ['r1', 'r2', 'r3'][takers.indexOf(true)] as string;
    assert.equal((await getBatchRecord(account, lapsed.key, new Date()))?.holder, winner);

    // A request that fails gives its lease up at once, and a retry may take over straight away.
    const failed = claimOf('failing', Date.now() + 60_000);
    await claimBatchKey(account, failed, []);
    assert.equal(await releaseBatch(account, failed.key, 'someone-else'), false);
    assert.equal(await releaseBatch(account, failed.key, 'failing'), true);
    const released = (await getBatchRecord(account, failed.key, new Date())) as never;
    assert.equal(
      await takeOverBatch(account, failed.key, released, 'retry', Date.now() + 60_000, Date.now()),
      true,
    );
  });

  it('keeps results of any size: more than one item when they do not compress under 350 KB', async () => {
    useHostEnvironment();
    const account = uniqueAccount('records');
    // 500 refusals with details that do not compress (random text): about 600 KB.
    const results = Array.from({ length: 500 }, (_, index) => ({
      index,
      error: {
        code: 107,
        message: 'Input parameter errors',
        details: [
          { field: `x${randomBytes(300).toString('base64')}`, message: randomBytes(600).toString('base64') },
        ],
      },
    }));
    const claim = claimOf('big', Date.now() + 60_000);
    await claimBatchKey(account, claim, results);
    const record = await getBatchRecord(account, claim.key, new Date());
    assert.ok((record?.chunks ?? 0) >= 2, `${record?.chunks} result items`);
    assert.deepEqual(await readBatchResults(account, claim.key, record as never), results);
  });
});
