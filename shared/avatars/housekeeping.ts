import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { avatarConfig } from './config.ts';
import { expiredByAge, isFresh } from './model/avatars.ts';
import {
  deleteAvatars,
  headAvatar,
  type ListedAvatar,
  listAvatars,
  readHousekeepingCursor,
  writeHousekeepingCursor,
} from './store/avatar-cache.ts';

export interface HousekeepingResult {
  /** Cache entries looked at in this run. */
  examined: number;
  /** Expired entries deleted in this run. */
  removed: number;
  /** True when the run stopped for time: the next run resumes where this one stopped. */
  remaining: boolean;
  /** True when this run started from where an earlier run stopped, not from the first entry. */
  resumed: boolean;
}

/** Object HEADs in flight at once while checking one page. */
const headConcurrency = 8;

/**
 * Removes expired avatar cache entries, one ListObjectsV2 page at a time, while `remainingMs()`
 * stays above the safety margin. After each page that is not the last, the last key handled is
 * saved in the bucket, so a run that stops for time (or fails) is resumed by the next one; a run
 * that reaches the end clears it, and the following pass starts again from the first entry.
 * Any failure is 10020001; entries not yet removed stay in S3 and are found by a later pass.
 */
export async function runAvatarHousekeeping(
  remainingMs: () => number,
  requestId: string,
): Promise<HousekeepingResult> {
  const result: HousekeepingResult = { examined: 0, removed: 0, remaining: false, resumed: false };
  try {
    let cursor = await readHousekeepingCursor();
    result.resumed = cursor !== undefined;
    let cursorSaved = result.resumed;
    for (;;) {
      if (remainingMs() <= avatarConfig.housekeepingSafetyMs) {
        result.remaining = true;
        break;
      }
      const page = await listAvatars(cursor, avatarConfig.housekeepingPageSize);
      const expired = await expiredKeys(page.items, new Date());
      const failed = await deleteAvatars(expired);
      result.examined += page.items.length;
      result.removed += expired.length - failed.length;
      if (failed.length > 0)
        log('warn', 'some expired avatars were not deleted', { requestId, count: failed.length });
      const last = page.items.at(-1)?.key;
      if (!page.more || last === undefined) break;
      cursor = last;
      await writeHousekeepingCursor(cursor, new Date());
      cursorSaved = true;
    }
    if (!result.remaining && cursorSaved) await writeHousekeepingCursor(undefined, new Date());
    log('info', 'avatar housekeeping', { requestId, ...result });
    return result;
  } catch (error) {
    log('error', 'avatar housekeeping failed', { requestId, ...result, ...describeError(error) });
    throw new ServiceError(Code.HousekeepingFailed, 'Avatar housekeeping failed; the next run resumes it', {
      cause: error,
    });
  }
}

async function expiredKeys(items: readonly ListedAvatar[], now: Date): Promise<string[]> {
  const expired: string[] = [];
  const needHead: string[] = [];
  for (const item of items) {
    if (expiredByAge(item.lastModified, now, avatarConfig.ttlSeconds)) expired.push(item.key);
    else needHead.push(item.key);
  }
  for (let start = 0; start < needHead.length; start += headConcurrency) {
    const batch = needHead.slice(start, start + headConcurrency);
    const heads = await Promise.all(batch.map((key) => headAvatar(key)));
    heads.forEach((head, index) => {
      // Gone already (deleted meanwhile): nothing to do. Unreadable expiry: treat as expired.
      if (head !== undefined && !isFresh(head.expiresAt, now)) expired.push(batch[index] as string);
    });
  }
  return expired;
}
