import { getDomain, normaliseDomain } from '../store/domains.ts';
import { openPrivateKey } from './key-store.ts';
import type { DkimAlgorithm } from './model/dkim.ts';
import { getDkimKey, type StoredDkimKey } from './store/dkim-keys.ts';

/**
 * What the delivery pipeline signs with: the domain's active DKIM key, decrypted. Undefined when the
 * domain is not registered or has no active key (then the sender refuses to send).
 */
export interface SigningKey {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  privateKeyPem: string;
}

/*
 * Decrypted keys are kept in memory per (domain, selector), so a warm sender does not call KMS for
 * every message. Selectors never change their key, so an entry is never stale: after a rotation the
 * domain item names a new selector and the new key is opened. The domain item is read every time.
 */
const cacheLimit = 200;
const opened = new Map<string, Promise<string>>();

function cachedPrivateKey(cacheKey: string, open: () => Promise<string>): Promise<string> {
  let entry = opened.get(cacheKey);
  if (entry === undefined) {
    entry = open();
    entry.catch(() => opened.delete(cacheKey));
    if (opened.size >= cacheLimit) {
      const oldest = opened.keys().next().value;
      if (oldest !== undefined) opened.delete(oldest);
    }
    opened.set(cacheKey, entry);
  }
  return entry;
}

async function openedKey(key: StoredDkimKey): Promise<SigningKey> {
  const privateKeyPem = await cachedPrivateKey(`${key.domain} ${key.selector}`, () => openPrivateKey(key));
  return { domain: key.domain, selector: key.selector, algorithm: key.algorithm, privateKeyPem };
}

/** The domain's active key (the one `active_selector` names), decrypted. */
export async function getActiveSigningKey(domain: string): Promise<SigningKey | undefined> {
  const record = await getDomain(normaliseDomain(domain));
  if (record?.activeSelector === undefined) return undefined;
  const key = await getDkimKey(record.domain, record.activeSelector);
  if (key === undefined || key.status !== 'active') return undefined;
  return openedKey(key);
}

/**
 * Every key that signs the domain's mail, decrypted: the active key, then its RSA companion when
 * the active key is Ed25519 (two DKIM-Signature headers, RFC 8463 section 4). Empty when the domain
 * has no active key, or when `owner` is given and the domain (as read now) is not `owner`'s: a
 * message of the domain's previous owner is never signed with the new owner's key.
 */
export async function getActiveSigningKeys(domain: string, owner?: string): Promise<SigningKey[]> {
  const record = await getDomain(normaliseDomain(domain));
  if (record?.activeSelector === undefined) return [];
  if (owner !== undefined && record.accountId !== owner) return [];
  const key = await getDkimKey(record.domain, record.activeSelector);
  if (key === undefined || key.status !== 'active') return [];
  const companion =
    key.companionSelector === undefined ? undefined : await getDkimKey(record.domain, key.companionSelector);
  const signing = [key, ...(companion?.status === 'active' ? [companion] : [])];
  return Promise.all(signing.map(openedKey));
}

/**
 * The keys of the given selectors, decrypted, whatever their status now (a retired key still
 * rebuilds the signature of a message it signed). Undefined when one of them is gone: retired keys
 * are deleted after their retention (docs/dkim.md).
 */
export async function getSigningKeysBySelector(
  domain: string,
  selectors: readonly string[],
): Promise<SigningKey[] | undefined> {
  const name = normaliseDomain(domain);
  const stored = await Promise.all(selectors.map((selector) => getDkimKey(name, selector)));
  if (stored.some((key) => key === undefined)) return undefined;
  return Promise.all((stored as StoredDkimKey[]).map(openedKey));
}
