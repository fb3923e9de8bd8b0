import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { secretString } from '../aws/secrets.ts';
import { envString } from '../config/env.ts';
import { decodeKey, localKey } from '../config/local-key-file.ts';

/**
 * Tokens carried in links of sent mail (one-click unsubscribe, open and click tracking): the
 * payload sealed with AES-256-GCM, so a token is both opaque (no address or id readable in it) and
 * signed (a changed byte fails to open). Each purpose has its own key, derived with HKDF from the
 * deployment's link key, so a token minted for one route never opens on another.
 *
 * Layout, base64url: version (1 byte) | IV (12) | ciphertext | tag (16). The version byte leaves
 * room to rotate the link key later while older mail still holds tokens of the current one.
 *
 * The link key comes from a Secrets Manager secret on AWS (`LINK_TOKEN_SECRET_ARN`, base64 of 32
 * bytes), else `LINK_TOKEN_KEY`, else the local host's file `<DATA_DIR>/link-token.key`.
 */
export type LinkPurpose = 'unsubscribe' | 'open' | 'click';

const version = 1;
const ivBytes = 12;
const tagBytes = 16;
const localKeyFile = 'link-token.key';

let masterKey: Promise<Uint8Array> | undefined;
const purposeKeys = new Map<LinkPurpose, Promise<Buffer>>();

async function readMasterKey(): Promise<Uint8Array> {
  const secretArn = envString('LINK_TOKEN_SECRET_ARN');
  if (secretArn !== undefined) return decodeKey(await secretString(secretArn), 'LINK_TOKEN_SECRET_ARN');
  const key = localKey('LINK_TOKEN_KEY', localKeyFile);
  if (key === undefined) throw new Error('Link tokens need LINK_TOKEN_SECRET_ARN or LINK_TOKEN_KEY');
  return key;
}

function keyFor(purpose: LinkPurpose): Promise<Buffer> {
  let key = purposeKeys.get(purpose);
  if (key === undefined) {
    masterKey ??= readMasterKey();
    masterKey.catch(() => {
      masterKey = undefined;
    });
    key = masterKey.then((master) =>
      Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `link-token:${purpose}`, 32)),
    );
    key.catch(() => purposeKeys.delete(purpose));
    purposeKeys.set(purpose, key);
  }
  return key;
}

/**
 * Seals `payload` into a URL-safe token for `purpose`. `stable`: the IV is an HMAC of the payload
 * (a synthetic IV), so the same payload seals to the same token, as mail rebuilt byte for byte from
 * its record needs (tracking links, docs/tracking.md); distinct payloads still get distinct IVs.
 */
export async function sealLinkToken(
  purpose: LinkPurpose,
  payload: Uint8Array,
  options: { stable?: boolean } = {},
): Promise<string> {
  return seal(purpose, await keyFor(purpose), payload, options.stable ?? false);
}

/**
 * `sealLinkToken` for many payloads at once (the links of one message): the key is awaited once and
 * the tokens sealed in one synchronous pass, each exactly as `sealLinkToken` seals it.
 */
export async function sealLinkTokens(
  purpose: LinkPurpose,
  payloads: readonly Uint8Array[],
  options: { stable?: boolean } = {},
): Promise<string[]> {
  const key = await keyFor(purpose);
  return payloads.map((payload) => seal(purpose, key, payload, options.stable ?? false));
}

const additionalData = {
  unsubscribe: Buffer.from('unsubscribe'),
  open: Buffer.from('open'),
  click: Buffer.from('click'),
} satisfies Record<LinkPurpose, Buffer>;

/** One token, written straight into its buffer: the links of a message seal a hundred of these. */
function seal(purpose: LinkPurpose, key: Buffer, payload: Uint8Array, stable: boolean): string {
  const token = Buffer.allocUnsafe(1 + ivBytes + payload.length + tagBytes);
  token[0] = version;
  const iv = token.subarray(1, 1 + ivBytes);
  if (stable)
    createHmac('sha256', key).update('synthetic-iv').update(payload).digest().copy(iv, 0, 0, ivBytes);
  else randomBytes(ivBytes).copy(iv);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: tagBytes });
  cipher.setAAD(additionalData[purpose]);
  // GCM is a stream mode: update yields the whole ciphertext and final nothing more.
  cipher.update(payload).copy(token, 1 + ivBytes);
  cipher.final();
  cipher.getAuthTag().copy(token, 1 + ivBytes + payload.length);
  return token.toString('base64url');
}

/** The payload of a token sealed for `purpose`; undefined for anything else (tampered, foreign, malformed). */
export async function openLinkToken(purpose: LinkPurpose, token: string): Promise<Buffer | undefined> {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // Base64 decoding ignores a trailing partial character: only the one spelling of the bytes opens.
  if (bytes.toString('base64url') !== token) return undefined;
  if (bytes.length < 1 + ivBytes + tagBytes || bytes[0] !== version) return undefined;
  const key = await keyFor(purpose);
  const iv = bytes.subarray(1, 1 + ivBytes);
  const tag = bytes.subarray(bytes.length - tagBytes);
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: tagBytes });
  decipher.setAAD(additionalData[purpose]);
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([
      decipher.update(bytes.subarray(1 + ivBytes, bytes.length - tagBytes)),
      decipher.final(),
    ]);
  } catch {
    return undefined;
  }
}

/** Forgets the cached keys (tests that change the configuration). */
export function resetLinkKeys(): void {
  masterKey = undefined;
  purposeKeys.clear();
}
