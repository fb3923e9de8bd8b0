import { dkimSign } from 'mailauth/lib/dkim/sign.js';

/** A domain's active DKIM key, as the key store hands it to the sender (decrypted, in memory only). */
export interface SigningKey {
  domain: string;
  selector: string;
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
  privateKeyPem: string;
}

/** mailauth's default header list without the fields a relay rewrites. */
const signedHeaders = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-ID',
  'Content-Description',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
];

export class SigningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SigningError';
  }
}

/**
 * Prepends a DKIM-Signature (relaxed/relaxed) made with the key's algorithm. `rewrittenHeaders` are
 * left out of the signature: Amazon SES replaces Message-ID and Date, so signing them would break it.
 */
export async function signMessage(
  raw: Buffer,
  key: SigningKey,
  rewrittenHeaders: readonly string[] = [],
): Promise<Buffer> {
  const skip = new Set(rewrittenHeaders.map((name) => name.toLowerCase()));
  const result = await dkimSign(raw, {
    canonicalization: 'relaxed/relaxed',
    algorithm: key.algorithm,
    headerList: signedHeaders.filter((name) => !skip.has(name.toLowerCase())),
    signatureData: [
      {
        signingDomain: key.domain,
        selector: key.selector,
        privateKey: key.privateKeyPem,
        algorithm: key.algorithm,
      },
    ],
  } as Parameters<typeof dkimSign>[1]);
  if (result.signatures.length === 0) {
    const first = result.errors?.[0] as { err?: { code?: string } } | undefined;
    throw new SigningError(`DKIM signing failed (${first?.err?.code ?? 'no signature produced'})`);
  }
  return Buffer.concat([Buffer.from(result.signatures), raw]);
}
