import { createHash } from 'node:crypto';
import type { ApiAnswer, Credential } from './api-client.ts';

/**
 * Valid keys are remembered briefly, so a client that opens a connection per message does not
 * cost a `whoami` call each time; a revoked key stops working within `ttlMs`. Only a digest of the
 * key is kept as the name. Refusals are never cached: each one is counted and slowed down.
 */
export class CredentialCache {
  readonly #ttlMs: number;
  readonly #entries = new Map<string, { credential: Credential; until: number }>();
  readonly #lookup: (key: string) => Promise<ApiAnswer<Credential>>;

  constructor(lookup: (key: string) => Promise<ApiAnswer<Credential>>, ttlMs: number) {
    this.#lookup = lookup;
    this.#ttlMs = ttlMs;
  }

  async check(key: string, now = Date.now()): Promise<ApiAnswer<Credential>> {
    const name = createHash('sha256').update(key).digest('base64url');
    const kept = this.#entries.get(name);
    if (kept !== undefined && kept.until > now) return { ok: true, data: kept.credential };
    this.#entries.delete(name);
    const answer = await this.#lookup(key);
    if (answer.ok) {
      if (this.#entries.size > 10_000) this.#entries.clear();
      this.#entries.set(name, { credential: answer.data, until: now + this.#ttlMs });
    }
    return answer;
  }
}
