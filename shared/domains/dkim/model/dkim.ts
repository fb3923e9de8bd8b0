/**
 * Pure DKIM rules: algorithms, selector names, the DNS record a domain publishes for a key, and
 * the comparison of a published record with ours. No I/O here (see docs/dkim.md).
 */

export const dkimAlgorithms = ['rsa-sha256', 'ed25519-sha256'] as const;
export type DkimAlgorithm = (typeof dkimAlgorithms)[number];

export type DkimKeyStatus = 'active' | 'retired';
export type DkimDnsStatus = 'verified' | 'pending' | 'mismatch' | 'unreachable';

/** The algorithm a newly registered domain signs with. */
export const defaultDkimAlgorithm: DkimAlgorithm = 'rsa-sha256';

/**
 * The algorithm of the key that signs beside a domain's key, or undefined. Many receivers still
 * cannot verify Ed25519 (RFC 8463), so an Ed25519 domain also signs with RSA-2048 (section 4 of
 * the RFC: a signer may add signatures of several algorithms, a verifier uses the one it knows).
 */
export function companionAlgorithm(algorithm: DkimAlgorithm): DkimAlgorithm | undefined {
  return algorithm === 'ed25519-sha256' ? 'rsa-sha256' : undefined;
}

/** Days a retired key stays listed (and stored) before it is removed. */
export const defaultRetiredKeyRetentionDays = 30;

/** Epoch seconds at which a key retired at `retiredAt` is removed (the table's TTL attribute). */
export function retiredKeyExpiry(retiredAt: Date, retentionDays: number): number {
  return Math.floor(retiredAt.getTime() / 1000) + Math.round(retentionDays * 86_400);
}

/** True for a retired key whose time is up, whether or not the table's TTL has removed it yet. */
export function isExpiredKey(key: { status: DkimKeyStatus; expiresAt?: number }, nowMs: number): boolean {
  return key.status === 'retired' && key.expiresAt !== undefined && key.expiresAt * 1000 <= nowMs;
}

/**
 * Bounds on one domain's keys (docs/dkim.md, "Bounds"), so no caller can grow its DKIM answers
 * without limit: at most `maxNewKeysPerDay` new keys in any 24 hours (an Ed25519 key's RSA companion
 * is part of its key, not counted apart), and at most `maxRetiredKeySets` retired keys (with their
 * companions) kept: a rotation past that retires the oldest ones for good at once.
 */
export const maxNewKeysPerDay = 10;
export const maxRetiredKeySets = 10;
const dayMs = 24 * 60 * 60 * 1000;

interface KeyTimes {
  selector: string;
  status: DkimKeyStatus;
  createdAt: string;
  retiredAt?: string;
  companionOf?: string;
  companionSelector?: string;
  expiresAt?: number;
}

/**
 * When the domain may get its next key: undefined when now, else the moment the oldest key of the
 * last 24 hours leaves the window.
 */
export function nextKeyAllowedAt(keys: readonly KeyTimes[], nowMs: number): number | undefined {
  const recent = keys
    .filter((key) => key.companionOf === undefined)
    .map((key) => Date.parse(key.createdAt))
    .filter((created) => Number.isFinite(created) && created > nowMs - dayMs)
    .sort((a, b) => a - b);
  if (recent.length < maxNewKeysPerDay) return undefined;
  return (recent[recent.length - maxNewKeysPerDay] as number) + dayMs;
}

/**
 * The retired keys to retire for good now: every retired key set beyond the newest
 * `maxRetiredKeySets` (by retirement time), with its companion. Keys already expired are not counted.
 */
export function retiredKeysBeyondLimit(keys: readonly KeyTimes[], nowMs: number): string[] {
  const kept = keys.filter((key) => key.status === 'retired' && !isExpiredKey(key, nowMs));
  const sets = kept
    .filter((key) => key.companionOf === undefined)
    .sort((a, b) => (b.retiredAt ?? b.createdAt).localeCompare(a.retiredAt ?? a.createdAt));
  const dropped = new Set(sets.slice(maxRetiredKeySets).map((key) => key.selector));
  return kept
    .filter(
      (key) => dropped.has(key.selector) || (key.companionOf !== undefined && dropped.has(key.companionOf)),
    )
    .map((key) => key.selector);
}

/**
 * The DNS status of a domain from the status of each active record: every record must be
 * published for all its signatures to verify, so the worst one counts
 * (unreachable, then mismatch, then pending, then verified).
 */
export function combinedDnsStatus(statuses: readonly DkimDnsStatus[]): DkimDnsStatus {
  for (const status of ['unreachable', 'mismatch', 'pending'] as const) {
    if (statuses.includes(status)) return status;
  }
  return 'verified';
}

/** RSA modulus length for rsa-sha256 keys (RFC 8301 asks for at least 1024; 2048 is the norm). */
export const rsaModulusLength = 2048;

/** The `k=` tag of the key record: `rsa` or `ed25519` (RFC 6376 3.6.1, RFC 8463 4). */
export function keyType(algorithm: DkimAlgorithm): 'rsa' | 'ed25519' {
  return algorithm === 'rsa-sha256' ? 'rsa' : 'ed25519';
}

export function isDkimAlgorithm(value: unknown): value is DkimAlgorithm {
  return typeof value === 'string' && (dkimAlgorithms as readonly string[]).includes(value);
}

const selectorPrefix: Record<DkimAlgorithm, string> = { 'rsa-sha256': 'rsa', 'ed25519-sha256': 'ed' };

/**
 * A new selector: `<rsa|ed>-<yyyymmdd>-<6 hex>`, e.g. `rsa-20261122-3f9a1c`. One DNS label,
 * lower case, readable (algorithm and creation day), and unique per rotation thanks to the
 * random suffix (the store also refuses a duplicate).
 */
export function newSelector(algorithm: DkimAlgorithm, now: Date, randomHex: string): string {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return `${selectorPrefix[algorithm]}-${day}-${randomHex.toLowerCase().slice(0, 6)}`;
}

const selectorPattern = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export function isValidSelector(selector: string): boolean {
  return selectorPattern.test(selector);
}

/** Owner name of the key record: `<selector>._domainkey.<domain>`. */
export function dkimDnsName(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain}`;
}

/** The TXT value for a public key (`p=` is base64: SPKI DER for RSA, the raw 32 bytes for Ed25519). */
export function dkimDnsValue(algorithm: DkimAlgorithm, publicKeyBase64: string): string {
  return `v=DKIM1; k=${keyType(algorithm)}; p=${publicKeyBase64}`;
}

/** A TXT character-string holds at most 255 octets (RFC 1035 3.3.14). */
export const maxTxtStringLength = 255;

/**
 * The value split into the ≤255-character strings that DNS providers ask for with long records
 * (an RSA-2048 record is about 410 characters). Verifiers join the strings without separators
 * (RFC 6376 3.6.2.2), so the joined chunks equal the value.
 */
export function chunkTxtValue(value: string, size = maxTxtStringLength): string[] {
  const chunks: string[] = [];
  for (let start = 0; start < value.length; start += size) chunks.push(value.slice(start, start + size));
  return chunks.length > 0 ? chunks : [''];
}

/** Tag=value list of a DKIM key record (RFC 6376 3.2), whitespace removed around tags and values. */
export function parseTagList(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const name = part.slice(0, separator).trim().toLowerCase();
    if (name === '' || tags.has(name)) continue;
    tags.set(name, part.slice(separator + 1).trim());
  }
  return tags;
}

/**
 * Compares what DNS published at the selector name with our key. `records` is what a TXT lookup
 * returns: one array of character-strings per record. No record → pending. Exactly one record that
 * names our key (same `p=` ignoring whitespace, a compatible `k=`, `v=DKIM1` when present) →
 * verified. Anything else (another key, a revoked empty `p=`, several records, which verifiers
 * may pick between at random) → mismatch.
 */
export function compareDnsRecords(
  records: readonly (readonly string[])[],
  algorithm: DkimAlgorithm,
  publicKeyBase64: string,
): Exclude<DkimDnsStatus, 'unreachable'> {
  if (records.length === 0) return 'pending';
  if (records.length > 1) return 'mismatch';
  const tags = parseTagList((records[0] ?? []).join(''));
  const version = tags.get('v');
  if (version !== undefined && version !== 'DKIM1') return 'mismatch';
  const type = (tags.get('k') ?? 'rsa').toLowerCase();
  if (type !== keyType(algorithm)) return 'mismatch';
  const published = (tags.get('p') ?? '').replace(/\s+/g, '');
  return published !== '' && published === publicKeyBase64 ? 'verified' : 'mismatch';
}

/** The key record as the status endpoint shows it (dates already formatted by the caller). */
export interface DkimKeyView {
  selector: string;
  algorithm: DkimAlgorithm;
  dns_name: string;
  dns_type: 'TXT';
  dns_value: string;
  dns_value_chunks: string[];
  status: DkimKeyStatus;
  created_at: string;
  retired_at?: string;
}

export function keyView(
  key: {
    domain: string;
    selector: string;
    algorithm: DkimAlgorithm;
    publicKey: string;
    status: DkimKeyStatus;
  },
  createdAt: string,
  retiredAt?: string,
): DkimKeyView {
  const value = dkimDnsValue(key.algorithm, key.publicKey);
  const view: DkimKeyView = {
    selector: key.selector,
    algorithm: key.algorithm,
    dns_name: dkimDnsName(key.selector, key.domain),
    dns_type: 'TXT',
    dns_value: value,
    dns_value_chunks: chunkTxtValue(value),
    status: key.status,
    created_at: createdAt,
  };
  if (retiredAt !== undefined) view.retired_at = retiredAt;
  return view;
}
