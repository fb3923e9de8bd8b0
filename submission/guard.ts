/**
 * What keeps one client from taking the server (docs/smtp.md, "Protection"): connections counted
 * per source address and per key, and AUTH failures counted per address, each failure making the
 * next answer slower, so guessing keys costs seconds per try rather than milliseconds.
 */
export interface GuardLimits {
  maxConnectionsPerAddress: number;
  maxConnectionsPerKey: number;
  /** The delay added per failure already counted for the address. */
  authFailureDelayMs: number;
  /** The delay never grows beyond this. */
  maxAuthFailureDelayMs: number;
  /** How long a failure counts. */
  authFailureWindowMs: number;
}

export class ConnectionGuard {
  readonly #limits: GuardLimits;
  readonly #byAddress = new Map<string, number>();
  readonly #byKey = new Map<string, number>();
  readonly #failures = new Map<string, number[]>();

  constructor(limits: GuardLimits) {
    this.#limits = limits;
  }

  /** Counts a connection from `address`; false (and nothing counted) when the address is at its cap. */
  openConnection(address: string): boolean {
    const open = this.#byAddress.get(address) ?? 0;
    if (open >= this.#limits.maxConnectionsPerAddress) return false;
    this.#byAddress.set(address, open + 1);
    return true;
  }

  closeConnection(address: string): void {
    release(this.#byAddress, address);
  }

  /** Counts an authenticated connection of `keyId`; false when the key is at its cap. */
  openKey(keyId: string): boolean {
    const open = this.#byKey.get(keyId) ?? 0;
    if (open >= this.#limits.maxConnectionsPerKey) return false;
    this.#byKey.set(keyId, open + 1);
    return true;
  }

  closeKey(keyId: string): void {
    release(this.#byKey, keyId);
  }

  /** The failures of `address` still counted. */
  authFailures(address: string, now = Date.now()): number {
    const recent = (this.#failures.get(address) ?? []).filter(
      (at) => now - at < this.#limits.authFailureWindowMs,
    );
    if (recent.length === 0) this.#failures.delete(address);
    else this.#failures.set(address, recent);
    return recent.length;
  }

  /** Records a failed AUTH and answers how long to wait before replying to it. */
  recordAuthFailure(address: string, now = Date.now()): number {
    const before = this.authFailures(address, now);
    this.#failures.set(address, [...(this.#failures.get(address) ?? []), now]);
    return Math.min((before + 1) * this.#limits.authFailureDelayMs, this.#limits.maxAuthFailureDelayMs);
  }
}

function release(counts: Map<string, number>, name: string): void {
  const open = (counts.get(name) ?? 0) - 1;
  if (open <= 0) counts.delete(name);
  else counts.set(name, open);
}
