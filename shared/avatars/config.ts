import { envNumber, envString } from '../platform/config/env.ts';

function baseUrl(): string {
  const raw = envString('GRAVATAR_BASE_URL', 'https://gravatar.com/avatar') as string;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new Error(`Configuration GRAVATAR_BASE_URL must be an http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new Error(`Configuration GRAVATAR_BASE_URL must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** Avatar lookup and cache settings; read once when the avatar or keepalive function starts. */
export const avatarConfig = {
  /** Gravatar's avatar endpoint; `<base>/<sha256>?s=<size>&d=404` is requested. */
  gravatarBaseUrl: baseUrl(),
  /** A slower Gravatar is treated as down: the generated image is served instead. */
  gravatarTimeoutMs: envNumber('GRAVATAR_TIMEOUT_MS', 1500, { min: 50 }),
  /** Lifetime of a cache entry (Gravatar image, or generated image for an address without one). */
  ttlSeconds: envNumber('AVATAR_TTL_SECONDS', 86_400, { min: 1 }),
  /**
   * Lifetime of a generated image cached because Gravatar failed (timeout, 5xx, network), so a
   * person's real avatar comes back soon after an outage. Capped at `ttlSeconds`.
   */
  fallbackTtlSeconds: envNumber('AVATAR_FALLBACK_TTL_SECONDS', 300, { min: 1 }),
  /** Longest lifetime of a presigned URL (also bounded by the entry's expiry). */
  urlTtlSeconds: envNumber('AVATAR_URL_TTL_SECONDS', 3_600, { min: 1 }),
  /** Housekeeping: keys listed per ListObjectsV2 page (S3 allows at most 1000). */
  housekeepingPageSize: Math.min(1000, envNumber('HOUSEKEEPING_PAGE_SIZE', 1000, { min: 1 })),
  /** Housekeeping stops starting pages when less than this much of the invocation's time is left. */
  housekeepingSafetyMs: envNumber('HOUSEKEEPING_SAFETY_MS', 5_000, { min: 0 }),
};
