import * as table from '../table/gateway.ts';
import { keys } from '../table/keys.ts';

/** `last_used_at` is refreshed at most once a minute per key, never once per request. */
export const lastUsedResolutionMs = 60_000;

const written = new Map<string, number>();
const maxRemembered = 10_000;

/**
 * Records that a key was used, unless this instance wrote it (or read a value) within the last
 * minute. The write is conditional on the stored value being a minute old, so many instances
 * together still write at most about once a minute per key. Undefined when nothing is written.
 */
export function noteKeyUse(keyId: string, storedLastUsedAt: number | undefined, now: number) {
  const last = Math.max(written.get(keyId) ?? 0, storedLastUsedAt ?? 0);
  if (now - last < lastUsedResolutionMs) return undefined;
  if (written.size >= maxRemembered) written.clear();
  written.set(keyId, now);
  return table.update({
    Key: keys.apiKey(keyId),
    UpdateExpression: 'SET last_used_at = :now',
    ConditionExpression:
      'attribute_exists(pk) AND (attribute_not_exists(last_used_at) OR last_used_at < :cutoff)',
    ExpressionAttributeValues: {
      ':now': new Date(now).toISOString(),
      ':cutoff': new Date(now - lastUsedResolutionMs).toISOString(),
    },
  });
}
