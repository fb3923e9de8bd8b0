import { log } from '../platform/observability/log.ts';
import { avatarConfig } from './config.ts';
import {
  type AvatarOrigin,
  addressHash,
  cacheKey,
  colourOf,
  entryLifetimeSeconds,
  initialsOf,
  isFresh,
  urlLifetimeSeconds,
} from './model/avatars.ts';
import { renderInitials } from './model/initials-image.ts';
import { headAvatar, presignAvatar, putAvatar } from './store/avatar-cache.ts';
import { fetchGravatar } from './store/gravatar.ts';

/**
 * `cache`: the service's cache answered; `fresh`: the image was looked up (Gravatar, else generated)
 * during this request. Deliberately not `gravatar`/`generated`: the answer must not say whether the
 * address has an avatar (docs/avatars.md).
 */
export type AvatarSource = 'cache' | 'fresh';

export interface ResolvedAvatar {
  email: string;
  contentType: string;
  url: string;
  source: AvatarSource;
  /** When `url` stops working; ask again after it. */
  expiresAt: Date;
}

/** Cache → Gravatar (SHA-256, d=404) → generated initials; the result is cached with its expiry. */
export async function resolveAvatar(email: string, size: number, requestId: string): Promise<ResolvedAvatar> {
  const now = new Date();
  const hash = addressHash(email);
  const key = cacheKey(hash, size);

  const cached = await headAvatar(key);
  if (cached !== undefined && isFresh(cached.expiresAt, now)) {
    return answer(email, key, cached.contentType, cached.expiresAt as Date, 'cache', now);
  }

  const outcome = await fetchGravatar({
    baseUrl: avatarConfig.gravatarBaseUrl,
    hash,
    size,
    timeoutMs: avatarConfig.gravatarTimeoutMs,
  });
  if (outcome.kind === 'failed') {
    // Only the reason and the request id: the address and its hash stay out of the logs.
    log('warn', 'gravatar unavailable; serving the generated avatar', { requestId, reason: outcome.reason });
  }
  const origin: AvatarOrigin = outcome.kind === 'found' ? 'gravatar' : 'generated';
  const contentType = outcome.kind === 'found' ? outcome.contentType : 'image/png';
  const bytes =
    outcome.kind === 'found' ? outcome.bytes : renderInitials(initialsOf(email), size, colourOf(hash));
  const lifetime = entryLifetimeSeconds(
    outcome.kind,
    avatarConfig.ttlSeconds,
    avatarConfig.fallbackTtlSeconds,
  );
  const expiresAt = new Date(now.getTime() + lifetime * 1000);
  await putAvatar({ key, contentType, bytes, expiresAt, origin });
  return answer(email, key, contentType, expiresAt, 'fresh', now);
}

async function answer(
  email: string,
  key: string,
  contentType: string,
  entryExpiresAt: Date,
  source: AvatarSource,
  now: Date,
): Promise<ResolvedAvatar> {
  const lifetime = urlLifetimeSeconds(entryExpiresAt, now, avatarConfig.urlTtlSeconds);
  const url = await presignAvatar(key, lifetime);
  return { email, contentType, url, source, expiresAt: new Date(now.getTime() + lifetime * 1000) };
}
