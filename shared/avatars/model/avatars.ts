import { createHash } from 'node:crypto';

/** Pure avatar rules: identity of an address, cache keys, sizes, initials, colours and expiry. */

export const avatarSizes = { min: 16, max: 512, default: 80 } as const;

export const avatarPrefix = 'avatars/';

/** The form Gravatar hashes: trimmed and lower-cased. */
export function normaliseAddress(address: string): string {
  return address.trim().toLowerCase();
}

/** SHA-256 (hex) of the normalised address: Gravatar's identifier and the cache key's stem. */
export function addressHash(address: string): string {
  return createHash('sha256').update(normaliseAddress(address), 'utf8').digest('hex');
}

/** `avatars/<sha256>/<size>`: every size of one person sits under one prefix (easy to purge). */
export function cacheKey(hash: string, size: number): string {
  return `${avatarPrefix}${hash}/${size}`;
}

/** Parses the `size` query value: an integer within 16–512, written in plain decimal digits. */
/**
 * What parseSize accepts, as a regular expression for the OpenAPI document (a query value is a
 * string): up to four digits, leading zeros included, from avatarSizes.min to avatarSizes.max.
 * test/unit/avatars.test.ts checks that the two agree.
 */
export const sizePattern = '^(0{0,2}(1[6-9]|[2-9][0-9])|0?([1-4][0-9]{2}|50[0-9]|51[0-2]))$';

export function parseSize(raw: string | undefined): number | undefined {
  if (raw === undefined) return avatarSizes.default;
  if (!/^\d{1,4}$/.test(raw)) return undefined;
  const size = Number(raw);
  return size >= avatarSizes.min && size <= avatarSizes.max ? size : undefined;
}

/**
 * Up to two initials from the local part: the first letter or digit of its first two words
 * (split on `.`, `_`, `-`, `+`), upper-cased; `?` when it has no ASCII letter or digit.
 */
export function initialsOf(address: string): string {
  const local = normaliseAddress(address).split('@')[0] ?? '';
  const words = local
    .split(/[._+-]+/)
    .map((word) => word.replace(/[^a-z0-9]/g, ''))
    .filter((word) => word.length > 0);
  if (words.length === 0) return '?';
  if (words.length === 1) return (words[0] as string).slice(0, 1).toUpperCase();
  return `${(words[0] as string)[0]}${(words[1] as string)[0]}`.toUpperCase();
}

export type Rgb = readonly [number, number, number];

/** A background colour derived from the hash: any hue, fixed saturation and lightness so white reads well. */
export function colourOf(hash: string): Rgb {
  const hue = Number.parseInt(hash.slice(0, 4), 16) % 360;
  return hslToRgb(hue, 0.55, 0.42);
}

function hslToRgb(hue: number, saturation: number, lightness: number): Rgb {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const x = chroma * (1 - Math.abs(((hue / 60) % 2) - 1));
  const m = lightness - chroma / 2;
  const [r, g, b] =
    hue < 60
      ? [chroma, x, 0]
      : hue < 120
        ? [x, chroma, 0]
        : hue < 180
          ? [0, chroma, x]
          : hue < 240
            ? [0, x, chroma]
            : hue < 300
              ? [x, 0, chroma]
              : [chroma, 0, x];
  return [Math.round((r + m) * 255), Math.round((g + m) * 255), Math.round((b + m) * 255)];
}

/** Where a cached image came from; kept in the object's metadata, never returned to callers. */
export type AvatarOrigin = 'gravatar' | 'generated';

/** What Gravatar answered: an image, "no avatar" (404), or nothing usable (timeout, 5xx, network). */
export type GravatarOutcome =
  | { kind: 'found'; contentType: string; bytes: Uint8Array }
  | { kind: 'absent' }
  | { kind: 'failed'; reason: string };

/**
 * How long an entry lives: the full TTL for a Gravatar image and for a confirmed "no avatar";
 * the short fallback TTL when Gravatar failed, so a real avatar shows up soon after an outage.
 */
export function entryLifetimeSeconds(
  outcome: GravatarOutcome['kind'],
  ttlSeconds: number,
  fallbackTtlSeconds: number,
): number {
  return outcome === 'failed' ? Math.min(ttlSeconds, fallbackTtlSeconds) : ttlSeconds;
}

/**
 * Lifetime of the presigned URL: never beyond the entry's expiry (housekeeping may delete the object
 * then) nor the configured URL lifetime; at least one second.
 */
export function urlLifetimeSeconds(expiresAt: Date, now: Date, urlTtlSeconds: number): number {
  const untilExpiry = Math.floor((expiresAt.getTime() - now.getTime()) / 1000);
  return Math.max(1, Math.min(urlTtlSeconds, untilExpiry));
}

/** The metadata value of an entry's expiry: epoch seconds. Undefined when absent or malformed. */
export function parseExpiry(value: string | undefined): Date | undefined {
  if (value === undefined || !/^\d{1,12}$/.test(value)) return undefined;
  return new Date(Number(value) * 1000);
}

export function formatExpiry(expiresAt: Date): string {
  return String(Math.floor(expiresAt.getTime() / 1000));
}

/** A cache entry is usable while its expiry lies ahead; an entry without a readable expiry is not. */
export function isFresh(expiresAt: Date | undefined, now: Date): boolean {
  return expiresAt !== undefined && expiresAt.getTime() > now.getTime();
}

/**
 * Housekeeping's verdict from a listing alone: an object written longer than the TTL ago has expired
 * whatever its metadata says (no entry is written with a longer life), so it needs no HeadObject.
 * Younger objects need their metadata read (`undefined`).
 */
export function expiredByAge(
  lastModified: Date | undefined,
  now: Date,
  ttlSeconds: number,
): true | undefined {
  if (lastModified === undefined) return undefined;
  return lastModified.getTime() + ttlSeconds * 1000 <= now.getTime() ? true : undefined;
}
