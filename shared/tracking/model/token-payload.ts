/**
 * What a tracking token names, packed small (the token is in every link of the mail): the message
 * uuid as its 16 bytes, the recipient's position in the message's recipient list (to, cc, bcc) as
 * 2 bytes and, for a click, the link's index in the HTML part (`trackableLinks`) as 2 bytes.
 */
export interface OpenPayload {
  messageUuid: string;
  recipient: number;
}

export interface ClickPayload extends OpenPayload {
  link: number;
}

const uuidBytes = 16;

function uuidToBytes(uuid: string): Buffer {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error('not a uuid');
  return Buffer.from(hex, 'hex');
}

function bytesToUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function encodeOpen(payload: OpenPayload): Buffer {
  const bytes = Buffer.alloc(uuidBytes + 2);
  uuidToBytes(payload.messageUuid).copy(bytes);
  bytes.writeUInt16BE(payload.recipient, uuidBytes);
  return bytes;
}

export function encodeClick(payload: ClickPayload): Buffer {
  const bytes = Buffer.alloc(uuidBytes + 4);
  encodeOpen(payload).copy(bytes);
  bytes.writeUInt16BE(payload.link, uuidBytes + 2);
  return bytes;
}

export function decodeOpen(bytes: Buffer): OpenPayload | undefined {
  if (bytes.length !== uuidBytes + 2) return undefined;
  return { messageUuid: bytesToUuid(bytes.subarray(0, uuidBytes)), recipient: bytes.readUInt16BE(uuidBytes) };
}

export function decodeClick(bytes: Buffer): ClickPayload | undefined {
  if (bytes.length !== uuidBytes + 4) return undefined;
  return {
    messageUuid: bytesToUuid(bytes.subarray(0, uuidBytes)),
    recipient: bytes.readUInt16BE(uuidBytes),
    link: bytes.readUInt16BE(uuidBytes + 2),
  };
}
