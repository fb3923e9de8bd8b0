/**
 * A token bucket per key: `rate` tokens a second refill up to `burst`. Pure: time is passed in.
 * A request takes one token; `charge` takes more after the fact (a batch pays one token per
 * message), which may take the bucket below zero: the debt is repaid by the refill before the
 * next request is admitted.
 */
export interface BucketDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until one token is available again (0 when allowed). */
  retryAfterSeconds: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
}

interface BucketState {
  tokens: number;
  updatedAt: number;
}

export class TokenBuckets {
  readonly #rate: number;
  readonly #burst: number;
  readonly #maxKeys: number;
  readonly #buckets = new Map<string, BucketState>();

  constructor(rate: number, burst: number, maxKeys = 10_000) {
    this.#rate = rate;
    this.#burst = burst;
    this.#maxKeys = maxKeys;
  }

  /** Admits a request when the bucket holds a whole token, and takes it. */
  take(key: string, nowMs: number): BucketDecision {
    const state = this.#refill(key, nowMs);
    const allowed = state.tokens >= 1;
    if (allowed) state.tokens -= 1;
    return this.#decision(state, allowed);
  }

  /**
   * Takes `tokens` more from an admitted caller, whatever is left: the bucket may go into debt
   * (below zero), and `take` refuses until the refill has brought it back to a whole token.
   */
  charge(key: string, tokens: number, nowMs: number): BucketDecision {
    const state = this.#refill(key, nowMs);
    state.tokens -= Math.max(0, tokens);
    return this.#decision(state, true);
  }

  #decision(state: BucketState, allowed: boolean): BucketDecision {
    return {
      allowed,
      limit: this.#burst,
      remaining: Math.max(0, Math.floor(state.tokens)),
      retryAfterSeconds: allowed ? 0 : this.#secondsFor(1 - state.tokens),
      resetSeconds: this.#secondsFor(this.#burst - state.tokens),
    };
  }

  #secondsFor(tokens: number): number {
    if (tokens <= 0) return 0;
    return this.#rate > 0 ? Math.max(1, Math.ceil(tokens / this.#rate)) : 60;
  }

  #refill(key: string, nowMs: number): BucketState {
    let state = this.#buckets.get(key);
    if (state === undefined) {
      if (this.#buckets.size >= this.#maxKeys) this.#evictOldest();
      state = { tokens: this.#burst, updatedAt: nowMs };
      this.#buckets.set(key, state);
      return state;
    }
    const elapsed = Math.max(0, nowMs - state.updatedAt) / 1000;
    state.tokens = Math.min(this.#burst, state.tokens + elapsed * this.#rate);
    state.updatedAt = nowMs;
    return state;
  }

  #evictOldest(): void {
    const oldest = this.#buckets.keys().next();
    if (!oldest.done) this.#buckets.delete(oldest.value);
  }
}
