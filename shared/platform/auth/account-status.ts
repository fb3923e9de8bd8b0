import { getAccount } from './account-store.ts';

const cacheMs = 30_000;
const cache = new Map<string, { active: boolean; until: number }>();

/**
 * Whether the account may use the API. An account without a record is active (the identity
 * provider vouches for it; it simply owns nothing yet); a disabled one is refused within 30 s.
 */
export async function isAccountActive(accountId: string, now = Date.now()): Promise<boolean> {
  const hit = cache.get(accountId);
  if (hit !== undefined && hit.until > now) return hit.active;
  const account = await getAccount(accountId);
  const active = account?.active ?? true;
  if (cache.size > 5_000) cache.clear();
  cache.set(accountId, { active, until: now + cacheMs });
  return active;
}
