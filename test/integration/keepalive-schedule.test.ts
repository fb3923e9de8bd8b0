import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CreateBucketCommand, HeadObjectCommand } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { useHostEnvironment } from '../support/host.ts';

/**
 * The scheduled door of POST /keepalive-1.0: EventBridge invokes the function directly with a
 * scheduled event (no API Gateway, no token). This file invokes the handler module the way the local
 * host's schedule worker (and EventBridge) does, against the shared host's S3 but in a bucket of its
 * own, so its page size (2, via HOUSEKEEPING_PAGE_SIZE) and its resume cursor are not disturbed by
 * other test files. It also runs the schedule worker itself with a one-second interval.
 */
useHostEnvironment();
const bucket = `avatar-housekeeping-${randomUUID().slice(0, 8)}`;
process.env.BUCKET_NAME = bucket;
process.env.HOUSEKEEPING_PAGE_SIZE = '2';
process.env.HOUSEKEEPING_SAFETY_MS = '1000';
process.env.KEEPALIVE_INTERVAL_SECONDS = '1';

// Imported only now: configuration and SDK clients are read when first loaded.
const { s3 } = await import('../../shared/platform/aws/clients.ts');
const { addressHash, cacheKey } = await import('../../shared/avatars/model/avatars.ts');
const { putAvatar } = await import('../../shared/avatars/store/avatar-cache.ts');
const { handler } = await import('../../functions/keepalive-run/handler.ts');
const { scheduledEvent, schedulesWorker } = await import('../../infra/local/scheduled-routes.ts');

/** A Lambda context whose remaining time follows `budget` (one value per call, the last repeats). */
function contextWith(budget: number[]): Context {
  let calls = 0;
  return {
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => budget[Math.min(calls++, budget.length - 1)] as number,
  } as unknown as Context;
}

async function exists(key: string): Promise<boolean> {
  try {
    await s3().send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
    return true;
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFound') return false;
    throw error;
  }
}

async function putEntry(minutesToExpiry: number): Promise<string> {
  const key = cacheKey(addressHash(`${randomUUID()}@example.com`), 80);
  await putAvatar({
    key,
    expiresAt: new Date(Date.now() + minutesToExpiry * 60_000),
    contentType: 'image/png',
    bytes: Buffer.from('png'),
    origin: 'generated',
  });
  return key;
}

beforeAll(async () => {
  await s3().send(new CreateBucketCommand({ Bucket: bucket }));
});

describe('scheduled avatar housekeeping', () => {
  const expired: string[] = [];
  const fresh: string[] = [];

  it('stops for time after a page, and the next run resumes where it stopped', async () => {
    for (let i = 0; i < 5; i += 1) expired.push(await putEntry(-5));
    for (let i = 0; i < 2; i += 1) fresh.push(await putEntry(60));

    // Time for exactly one page: plenty before the first, less than the safety margin after it.
    const first = await handler(scheduledEvent('keepalive-run') as never, contextWith([60_000, 500]));
    assert.deepEqual(first, {
      examined: 2,
      removed: (first as { removed: number }).removed,
      remaining: true,
      resumed: false,
    });

    const second = await handler(scheduledEvent('keepalive-run') as never, contextWith([60_000]));
    // Resumed after the first page: the 5 keys it had not seen, not all 7 again.
    assert.deepEqual(second, {
      examined: 5,
      removed: 5 - (first as { removed: number }).removed,
      remaining: false,
      resumed: true,
    });
    for (const key of expired) assert.equal(await exists(key), false, `${key} removed`);
    for (const key of fresh) assert.equal(await exists(key), true, `${key} kept`);

    // The pass reached the end, so the next one starts from the first entry again.
    const third = await handler(scheduledEvent('keepalive-run') as never, contextWith([60_000]));
    assert.deepEqual(third, { examined: 2, removed: 0, remaining: false, resumed: false });
  });

  // A scheduled-looking body sent through API Gateway is answered 104: test/unit/http-chain.test.ts.
  it('runs on its own from the local schedule worker, as EventBridge runs it on AWS', async () => {
    const key = await putEntry(-1);
    const worker = schedulesWorker();
    await worker.start({ dataDir: '', env: {} });
    try {
      await expect
        .poll(() => exists(key), {
          timeout: 60_000,
          interval: 250,
          message: 'the worker removed the expired entry',
        })
        .toBe(false);
      for (const kept of fresh) assert.equal(await exists(kept), true);
    } finally {
      await worker.stop();
    }
  });
});
