import { createHash } from 'node:crypto';

/**
 * Tokens this function instance has verified, so that a client's next calls skip the signature
 * check (docs/security.md, "Verified-token cache"). An entry is found by the SHA-256 of the whole
 * compact token (header, payload and signature), so only the very same token finds it and the
 * map never holds a token itself. It is trusted until the token's `exp` (never past it: expiry is
 * checked on every request) and for at most `ttlMs`; the map holds at most `maxEntries` tokens and
 * drops the oldest first. Only what passed the full verification is remembered; a refusal never is.
 */
export class VerifiedTokens<Claims> {
  readonly #entries = new Map<string, { claims: Claims; until: number }>();
  readonly ttlMs: number;
  readonly maxEntries: number;

  constructor(ttlMs: number, maxEntries: number) {
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  /** The claims of `token` if it was verified and neither its `exp` nor the TTL has passed. */
  get(token: string, now: number): Claims | undefined {
    const key = keyOf(token);
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now < entry.until) return entry.claims;
    this.#entries.delete(key);
    return undefined;
  }

  /** Remembers a token that passed verification; `expiresAt` is its `exp` in milliseconds. */
  set(token: string, claims: Claims, expiresAt: number, now: number): void {
    const until = Math.min(expiresAt, now + this.ttlMs);
    if (until <= now) return;
    const key = keyOf(token);
    this.#entries.delete(key);
    while (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    this.#entries.set(key, { claims, until });
  }

  get size(): number {
    return this.#entries.size;
  }
}

const keyOf = (token: string): string => createHash('sha256').update(token).digest('base64url');
