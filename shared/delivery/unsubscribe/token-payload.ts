/**
 * What an unsubscribe token holds (docs/streams.md), before it is sealed: the stream, the message,
 * the account and the recipient, packed in bytes so the link stays short. Pure; the sealing
 * (AES-256-GCM: opaque and tamper-proof) is shared/platform/tokens/link-tokens.ts.
 *
 * Layout: stream (1 byte: 1 = broadcast) | message uuid (16) | account length (2, big-endian) |
 * account (UTF-8) | recipient (UTF-8, lower-cased).
 */
export interface UnsubscribeClaim {
  stream: 'broadcast';
  messageUuid: string;
  account: string;
  email: string;
}

const broadcastCode = 1;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function packClaim(claim: UnsubscribeClaim): Uint8Array {
  const account = Buffer.from(claim.account, 'utf8');
  const head = Buffer.alloc(1 + 16 + 2);
  head[0] = broadcastCode;
  Buffer.from(claim.messageUuid.replaceAll('-', ''), 'hex').copy(head, 1);
  head.writeUInt16BE(account.length, 17);
  return Buffer.concat([head, account, Buffer.from(claim.email.toLowerCase(), 'utf8')]);
}

/** The claim of an opened token, or undefined when the bytes are not one (a token of another layout). */
export function unpackClaim(bytes: Uint8Array): UnsubscribeClaim | undefined {
  const buffer = Buffer.from(bytes);
  if (buffer.length < 19 || buffer[0] !== broadcastCode) return undefined;
  const hex = buffer.subarray(1, 17).toString('hex');
  const messageUuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const accountLength = buffer.readUInt16BE(17);
  if (buffer.length <= 19 + accountLength || !uuidPattern.test(messageUuid)) return undefined;
  const account = buffer.subarray(19, 19 + accountLength).toString('utf8');
  const email = buffer.subarray(19 + accountLength).toString('utf8');
  if (account === '' || !email.includes('@')) return undefined;
  return { stream: 'broadcast', messageUuid, account, email };
}
