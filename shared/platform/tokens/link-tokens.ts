import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
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
 * Indexed tokens (the links of one copy, `sealIndexedLinkTokens`) are version 2: that seal, then the
 * link's index (2 bytes) and a MAC of both (10 bytes).
 *
 * The link key comes from a Secrets Manager secret on AWS (`LINK_TOKEN_SECRET_ARN`, base64 of 32
 * bytes), else `LINK_TOKEN_KEY`, else the local host's file `<DATA_DIR>/link-token.key`.
 */
export type LinkPurpose = 'unsubscribe' | 'open' | 'click';

const version = 1;
const indexedVersion = 2;
const ivBytes = 12;
const tagBytes = 16;
const indexBytes = 2;
const macBytes = 10;
const localKeyFile = 'link-token.key';

let masterKey: Promise<Uint8Array> | undefined;
const purposeKeys = new Map<string, Promise<Buffer>>();

async function readMasterKey(): Promise<Uint8Array> {
  const secretArn = envString('LINK_TOKEN_SECRET_ARN');
  if (secretArn !== undefined) return decodeKey(await secretString(secretArn), 'LINK_TOKEN_SECRET_ARN');
  const key = localKey('LINK_TOKEN_KEY', localKeyFile);
  if (key === undefined) throw new Error('Link tokens need LINK_TOKEN_SECRET_ARN or LINK_TOKEN_KEY');
  return key;
}

/** The key of `purpose` (the seal's), or of its index MAC when `use` is 'index-mac'. */
function keyFor(purpose: LinkPurpose, use: 'seal' | 'index-mac' = 'seal'): Promise<Buffer> {
  const info = use === 'seal' ? `link-token:${purpose}` : `link-token:${purpose}:${use}`;
  let key = purposeKeys.get(info);
  if (key === undefined) {
    masterKey ??= readMasterKey();
    masterKey.catch(() => {
      masterKey = undefined;
    });
    key = masterKey.then((master) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), info, 32)));
    key.catch(() => purposeKeys.delete(info));
    purposeKeys.set(info, key);
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
 * The tokens of `count` links that share one payload (the links of one recipient's copy): token `i`
 * names the payload and the index `i`. The payload is sealed once, with a synthetic IV (stable, as
 * `sealLinkToken` with `stable`), and each token is that seal, the index and an HMAC-SHA256 of both
 * under the purpose's own MAC key, cut to 10 bytes: a hundred links cost one seal and a hundred
 * HMACs, not a hundred seals. A changed index or seal fails the MAC; the seal's associated data
 * differs from a single token's, so the seal alone never opens as one.
 */
export async function sealIndexedLinkTokens(
  purpose: LinkPurpose,
  payload: Uint8Array,
  count: number,
): Promise<string[]> {
  if (count > 0xffff) throw new Error('at most 65,535 indexed tokens share one payload');
  const [key, macKey] = await Promise.all([keyFor(purpose), keyFor(purpose, 'index-mac')]);
  const sealed = sealBytes(key, indexedData[purpose], payload, true);
  const tokens: string[] = [];
  for (let index = 0; index < count; index++) {
    const token = Buffer.allocUnsafe(1 + sealed.length + indexBytes + macBytes);
    token[0] = indexedVersion;
    sealed.copy(token, 1);
    token.writeUInt16BE(index, 1 + sealed.length);
    indexMac(macKey, token.subarray(0, token.length - macBytes)).copy(token, token.length - macBytes);
    tokens.push(token.toString('base64url'));
  }
  return tokens;
}

/** The payload and index of a token of `sealIndexedLinkTokens`; undefined for anything else. */
export async function openIndexedLinkToken(
  purpose: LinkPurpose,
  token: string,
): Promise<{ payload: Buffer; index: number } | undefined> {
  const bytes = tokenBytes(token);
  if (bytes === undefined || bytes[0] !== indexedVersion) return undefined;
  if (bytes.length < 1 + ivBytes + tagBytes + indexBytes + macBytes) return undefined;
  const signed = bytes.subarray(0, bytes.length - macBytes);
  const macKey = await keyFor(purpose, 'index-mac');
  if (!timingSafeEqual(indexMac(macKey, signed), bytes.subarray(signed.length))) return undefined;
  const payload = openBytes(
    await keyFor(purpose),
    indexedData[purpose],
    signed.subarray(1, signed.length - indexBytes),
  );
  return payload === undefined
    ? undefined
    : { payload, index: signed.readUInt16BE(signed.length - indexBytes) };
}

const indexMac = (key: Buffer, signed: Uint8Array): Buffer =>
  createHmac('sha256', key).update(signed).digest().subarray(0, macBytes);

const additionalData = {
  unsubscribe: Buffer.from('unsubscribe'),
  open: Buffer.from('open'),
  click: Buffer.from('click'),
} satisfies Record<LinkPurpose, Buffer>;

const indexedData = {
  unsubscribe: Buffer.from('unsubscribe:indexed'),
  open: Buffer.from('open:indexed'),
  click: Buffer.from('click:indexed'),
} satisfies Record<LinkPurpose, Buffer>;

function seal(purpose: LinkPurpose, key: Buffer, payload: Uint8Array, stable: boolean): string {
  const token = Buffer.allocUnsafe(1 + ivBytes + payload.length + tagBytes);
  token[0] = version;
  sealBytes(key, additionalData[purpose], payload, stable).copy(token, 1);
  return token.toString('base64url');
}

/** IV | ciphertext | tag: the IV random, or with `stable` an HMAC of the payload (a synthetic IV). */
function sealBytes(key: Buffer, aad: Buffer, payload: Uint8Array, stable: boolean): Buffer {
  const sealed = Buffer.allocUnsafe(ivBytes + payload.length + tagBytes);
  const iv = sealed.subarray(0, ivBytes);
  if (stable)
    createHmac('sha256', key).update('synthetic-iv').update(payload).digest().copy(iv, 0, 0, ivBytes);
  else randomBytes(ivBytes).copy(iv);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: tagBytes });
  cipher.setAAD(aad);
  // GCM is a stream mode: update yields the whole ciphertext and final nothing more.
  cipher.update(payload).copy(sealed, ivBytes);
  cipher.final();
  cipher.getAuthTag().copy(sealed, ivBytes + payload.length);
  return sealed;
}

function openBytes(key: Buffer, aad: Buffer, sealed: Buffer): Buffer | undefined {
  if (sealed.length < ivBytes + tagBytes) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, ivBytes), {
    authTagLength: tagBytes,
  });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
  try {
    return Buffer.concat([
      decipher.update(sealed.subarray(ivBytes, sealed.length - tagBytes)),
      decipher.final(),
    ]);
  } catch {
    return undefined;
  }
}

/** A token's bytes, when the token is their one base64url spelling (decoding ignores a trailing partial character). */
function tokenBytes(token: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  return bytes.toString('base64url') === token ? bytes : undefined;
}

/** The payload of a token sealed for `purpose`; undefined for anything else (tampered, foreign, malformed). */
export async function openLinkToken(purpose: LinkPurpose, token: string): Promise<Buffer | undefined> {
  const bytes = tokenBytes(token);
  if (bytes === undefined || bytes[0] !== version) return undefined;
  return openBytes(await keyFor(purpose), additionalData[purpose], bytes.subarray(1));
}

/** Forgets the cached keys (tests that change the configuration). */
export function resetLinkKeys(): void {
  masterKey = undefined;
  purposeKeys.clear();
}
