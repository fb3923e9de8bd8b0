import type { DkimAlgorithm } from '../domain/dkim.ts';
import { getDkimKey } from '../repositories/dkim-keys.ts';
import { getDomain, normaliseDomain } from '../repositories/domains.ts';
import { openPrivateKey } from './dkim-key-store.ts';

/**
 * What the delivery pipeline signs with: the domain's active DKIM key, decrypted. Undefined when the
 * domain is not registered or has no active key (then the message goes out unsigned).
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

export async function getActiveSigningKey(domain: string): Promise<SigningKey | undefined> {
  const record = await getDomain(normaliseDomain(domain));
  if (record?.activeSelector === undefined) return undefined;
  const key = await getDkimKey(record.domain, record.activeSelector);
  if (key === undefined || key.status !== 'active') return undefined;
  const privateKeyPem = await cachedPrivateKey(`${key.domain} ${key.selector}`, () => openPrivateKey(key));
  return { domain: key.domain, selector: key.selector, algorithm: key.algorithm, privateKeyPem };
}
