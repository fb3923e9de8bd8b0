import { generateKeyPair } from 'node:crypto';
import { type DkimAlgorithm, rsaModulusLength } from './model/dkim.ts';

export interface DkimKeyPair {
  /** The `p=` value: base64 SPKI DER for RSA, base64 of the raw 32-byte key for Ed25519 (RFC 8463). */
  publicKey: string;
  /** PKCS#8 PEM. Only ever handed to the key envelope (encrypt) or to a signer; never logged. */
  privateKeyPem: string;
}

/** A fresh key pair for the algorithm (RSA 2048 or Ed25519), generated off the main thread. */
export async function generateDkimKeyPair(algorithm: DkimAlgorithm): Promise<DkimKeyPair> {
  const encodings = {
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  } as const;
  const { publicKey, privateKey } = await new Promise<{ publicKey: Buffer; privateKey: string }>(
    (resolve, reject) => {
      const done = (error: Error | null, publicKey: Buffer, privateKey: string) =>
        error === null ? resolve({ publicKey, privateKey }) : reject(error);
      if (algorithm === 'rsa-sha256') {
        generateKeyPair('rsa', { modulusLength: rsaModulusLength, ...encodings }, done);
      } else {
        generateKeyPair('ed25519', encodings, done);
      }
    },
  );
  // An Ed25519 SPKI is a fixed 12-byte header followed by the raw 32-byte key (RFC 8463 4.2).
  const p = algorithm === 'rsa-sha256' ? publicKey : publicKey.subarray(-32);
  return { publicKey: p.toString('base64'), privateKeyPem: privateKey };
}
