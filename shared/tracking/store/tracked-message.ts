import {
  contentKeyOf,
  type MessageItem,
  type MessageStream,
  partsAt,
  readState,
  streamOf,
  unpackBodies,
} from '../../messages/index.ts';
import { getObjectBytes } from '../../platform/objects/objects.ts';
import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';

/**
 * A message as a tracking hit needs it: who the recipient at a position is, when the relay
 * accepted the message, the labels its events carry, and (for a click) the stored HTML part the
 * link's target is read from.
 */
export interface TrackedMessage {
  messageUuid: string;
  accountId: string;
  tenant: string;
  stream: MessageStream;
  status: string;
  subject: string;
  tags: Array<{ name: string; value: string }>;
  metadata: Record<string, string>;
  recipients: string[];
  /** When the relay accepted the message (UTC ISO), if it did. */
  sentAt?: string;
  item: MessageItem;
}

export async function getTrackedMessage(messageUuid: string): Promise<TrackedMessage | undefined> {
  const item = (await table.get(keys.message(messageUuid))) as
    | (MessageItem & Record<string, unknown>)
    | undefined;
  if (item === undefined || typeof item.account_id !== 'string') return undefined;
  const { state } = readState(item);
  return {
    messageUuid,
    accountId: item.account_id,
    tenant: item.tenant,
    stream: streamOf(item),
    status: String(item.status),
    subject: item.subject ?? '',
    tags: item.tags ?? [],
    metadata: item.metadata ?? {},
    recipients: state.recipients.map((recipient) => recipient.email),
    sentAt: state.history.find((entry) => entry.status === 'sent')?.at,
    // The content key follows from the recipients, which the item holds in its compressed state.
    // Empty lists and the content item are left out of the stored item: restored as the reader does.
    item: {
      ...item,
      to: item.to ?? [],
      cc: item.cc ?? [],
      bcc: item.bcc ?? [],
      content: item.content ?? { store: 'item' },
      recipients: state.recipients,
      history: state.history,
    },
  };
}

/** The stored HTML part of a message; undefined when it has none (or it is gone). */
export async function storedHtmlOf(message: TrackedMessage): Promise<string | undefined> {
  const content = message.item.content;
  if (content.store !== 's3') {
    const bodies = (await table.get(contentKeyOf(message.item))) as
      | Parameters<typeof unpackBodies>[0]
      | undefined;
    if (bodies?.z === undefined) return undefined;
    return unpackBodies(bodies).html?.toString('utf8');
  }
  if (content.html === undefined) return undefined;
  const object = await getObjectBytes(content.key).catch(() => undefined);
  if (object === undefined) return undefined;
  return partsAt(object, { html: content.html })?.html?.toString('utf8');
}
