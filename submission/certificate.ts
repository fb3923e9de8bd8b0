import { createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A self-signed certificate for the local submission server, made with node:crypto alone (Node
 * cannot write X.509, so the few DER structures are encoded here; openssl is not guaranteed on
 * every machine). It is kept in DATA_DIR, so a client that pinned it once keeps trusting it.
 */
export interface TlsMaterial {
  key: string;
  cert: string;
}

function length(size: number): Buffer {
  if (size < 0x80) return Buffer.from([size]);
  const bytes: number[] = [];
  for (let rest = size; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...content: Buffer[]) => der(0x30, ...content);
const set = (...content: Buffer[]) => der(0x31, ...content);

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [first * 40 + second];
  for (const part of rest) {
    const chunk: number[] = [part & 0x7f];
    for (let value = part >> 7; value > 0; value >>= 7) chunk.unshift((value & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** A non-negative INTEGER, in DER's minimal form: a leading zero byte only before a high bit. */
function integer(value: Buffer): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start += 1;
  const digits = value.subarray(start);
  return der(0x02, (digits[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), digits]) : digits);
}

function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14);
  return der(0x17, Buffer.from(`${text}Z`));
}

function name(commonName: string): Buffer {
  return sequence(set(sequence(oid('2.5.4.3'), der(0x0c, Buffer.from(commonName)))));
}

const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));

/** A P-256 certificate for `localhost` and 127.0.0.1, valid ten years from now. */
export function selfSignedCertificate(
  hostName = 'localhost',
  now = new Date(),
  serial = randomBytes(16),
): TlsMaterial {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const notAfter = new Date(now.getTime() + 10 * 365 * 24 * 3600 * 1000);
  const subjectAltName = sequence(
    ...[...new Set([hostName, 'localhost'])].map((dnsName) => der(0x82, Buffer.from(dnsName))),
    der(0x87, Buffer.from([127, 0, 0, 1])),
  );
  const extensions = der(
    0xa3,
    sequence(
      sequence(oid('2.5.29.17'), der(0x04, subjectAltName)),
      sequence(oid('2.5.29.19'), der(0x04, sequence())),
    ),
  );
  const tbs = sequence(
    der(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name(hostName),
    sequence(utcTime(new Date(now.getTime() - 3600 * 1000)), utcTime(notAfter)),
    name(hostName),
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, { key: privateKey, dsaEncoding: 'der' });
  const certificate = sequence(tbs, ecdsaWithSha256, der(0x03, Buffer.from([0]), signature));
  const base64 = certificate.toString('base64').replace(/.{1,64}/g, '$&\n');
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    cert: `-----BEGIN CERTIFICATE-----\n${base64}-----END CERTIFICATE-----\n`,
  };
}

/** The certificate kept at `<dir>/submission-tls.json`, made on first use. */
export function localCertificate(file: string): TlsMaterial {
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as TlsMaterial;
    createPrivateKey(kept.key);
    return kept;
  }
  const made = selfSignedCertificate();
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(made), { mode: 0o600 });
  return made;
}
