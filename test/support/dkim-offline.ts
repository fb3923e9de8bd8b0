import { generateKeyPairSync } from 'node:crypto';
import { authenticate } from 'mailauth';
import type { SigningKey } from '../../shared/delivery/mail/dkim-signer.ts';

/** One DKIM verdict as mailauth reports it (the parts tests read). */
export interface DkimVerdict {
  status: { result: string; header?: { a?: string } };
}

/** A fresh signing key for `<selector>._domainkey.shop.test`, and the TXT record that publishes it. */
export function testSigningKey(
  algorithm: SigningKey['algorithm'],
  selector: string,
): { key: SigningKey; txt: string } {
  const pair =
    algorithm === 'rsa-sha256'
      ? generateKeyPairSync('rsa', { modulusLength: 2048 })
      : generateKeyPairSync('ed25519');
  const der = pair.publicKey.export({ type: 'spki', format: 'der' });
  const p = algorithm === 'rsa-sha256' ? der.toString('base64') : der.subarray(-32).toString('base64');
  return {
    key: {
      domain: 'shop.test',
      selector,
      algorithm,
      privateKeyPem: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    },
    txt: `v=DKIM1; k=${algorithm === 'rsa-sha256' ? 'rsa' : 'ed25519'}; p=${p}`,
  };
}

/**
 * mailauth's DKIM verdicts on `raw`, with the key records answered from `records` (name → TXT)
 * instead of DNS: unit tests of signing without a DNS server (the integration tests publish
 * their records on the test DNS server, test/support/dns.ts).
 */
export async function verifyDkimOffline(
  raw: Buffer,
  records: Record<string, string>,
): Promise<DkimVerdict[]> {
  const result = await authenticate(raw, {
    ip: '127.0.0.1',
    helo: 'localhost',
    sender: 'orders@shop.test',
    mta: 'mx.test',
    resolver: async (name: string, type: string) => {
      const record = records[name];
      if (type === 'TXT' && record !== undefined) return [[record]];
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    },
  });
  return result.dkim.results as DkimVerdict[];
}
