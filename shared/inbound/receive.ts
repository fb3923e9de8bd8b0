import { type DomainRecord, getDomain } from '../domains/index.ts';
import { getMessages } from '../messages/index.ts';
import { bucketName } from '../platform/config/storage.ts';
import { log } from '../platform/observability/log.ts';
import { inboundRetentionDays } from './config.ts';
import {
  domainOf,
  type InboundContent,
  type InboundItem,
  inboundUuidOf,
  mailboxHashOf,
  threadCandidates,
} from './model/inbound.ts';
import type { Receipt } from './model/receipt.ts';
import type { ParsedMessage } from './parse.ts';
import { putInbound } from './store/inbound.ts';
import { inboundObjectKeys, openObject } from './store/inbound-objects.ts';
import { putObject, uploadStream } from './store/inbound-uploads.ts';
import { getSesMessageIds } from './store/ses-message-ids.ts';

/**
 * The inbound function's work (docs/inbound.md): for one SES receipt off the queue, the stored
 * message is parsed (streamed from S3), its parts are stored beside it, and one item is written
 * per receiving recipient for that domain's account. The items are the outbox of the
 * `inbound.received` event (the table stream announces them), so nothing is announced that is not
 * stored, and nothing stored goes unannounced. Every step is idempotent (ids and object keys derive
 * from SES's message id), so a failed one is simply redelivered by the queue (functions/inbound
 * reports it), and after its last attempt kept in the dead-letter queue. A message that cannot be
 * parsed is still stored (raw, with `parse_error`) and announced.
 */
export async function receiveMessage(receipt: Receipt): Promise<void> {
  if (receipt.bucket !== bucketName()) {
    throw new Error(`receipt names bucket ${receipt.bucket}, not the service's`);
  }
  const targets = await receivingRecipients(receipt);
  if (targets.length === 0) {
    // The receipt rule takes mail for every domain SES verified in the account and region, but no
    // recipient's domain receives here (receiving off, or not registered): the raw message stays
    // in S3 for the retention period; nothing is announced to anyone.
    log('warn', 'inbound message for no receiving domain kept raw only', {
      ses_message_id: receipt.messageId,
      recipients: receipt.recipients.length,
    });
    return;
  }

  // The parsers load on the first message that needs them, not at every cold start.
  const [{ parseMessage }, { strippedTextReply }] = await Promise.all([
    import('./parse.ts'),
    import('./model/reply.ts'),
  ]);
  const { stream, size } = await openObject(receipt.objectKey);
  const parsed = await parseMessage(stream, async (index, content, meta) => {
    const key = inboundObjectKeys.attachment(receipt.messageId, index);
    return { key, size: await uploadStream(key, content, meta.contentType) };
  });
  let contentKey: string | undefined;
  if (parsed.parseError === undefined) {
    contentKey = inboundObjectKeys.content(receipt.messageId);
    const content: InboundContent = {
      text: parsed.text,
      html: parsed.html,
      stripped_text_reply: parsed.text === null ? null : strippedTextReply(parsed.text),
      headers: parsed.headers,
    };
    await putObject(contentKey, JSON.stringify(content), 'application/json');
  } else {
    log('warn', 'inbound message could not be parsed; kept raw', {
      ses_message_id: receipt.messageId,
      parse_error: parsed.parseError,
    });
  }

  const uuids = targets.map(({ recipient }) => inboundUuidOf(receipt.messageId, recipient));
  const threads = new Map<string, string | undefined>();
  const expiresAt = Math.floor(Date.parse(receipt.receivedAt) / 1000) + inboundRetentionDays() * 86_400;
  for (const [index, { recipient, domain }] of targets.entries()) {
    let replyTo = threads.get(domain.accountId);
    if (!threads.has(domain.accountId)) {
      replyTo = await threadOf(parsed, domain.accountId);
      threads.set(domain.accountId, replyTo);
    }
    const item = itemFor({
      uuid: uuids[index] as string,
      siblings: uuids.filter((_, other) => other !== index),
      receipt,
      recipient,
      domain,
      parsed,
      size,
      contentKey,
      replyTo,
      expiresAt,
    });
    const created = await putInbound(item);
    log('info', 'inbound message stored', {
      inbound_uuid: item.inbound_uuid,
      account: item.account_id,
      ses_message_id: receipt.messageId,
      bytes: size,
      attachments: parsed.attachments.length,
      parse_error: parsed.parseError !== undefined,
      threaded: replyTo !== undefined,
      repeated: !created,
    });
  }
}

/** The envelope recipients whose domain is registered here and receives mail, with its record. */
async function receivingRecipients(
  receipt: Receipt,
): Promise<Array<{ recipient: string; domain: DomainRecord }>> {
  const domains = new Map<string, Promise<DomainRecord | undefined>>();
  const targets: Array<{ recipient: string; domain: DomainRecord }> = [];
  for (const recipient of receipt.recipients) {
    const name = domainOf(recipient);
    let lookup = domains.get(name);
    if (lookup === undefined) {
      lookup = getDomain(name);
      domains.set(name, lookup);
    }
    const domain = await lookup;
    if (domain?.receiving === true) targets.push({ recipient, domain });
  }
  return targets;
}

/**
 * The account's own sent message this one answers: the first candidate of `In-Reply-To` and
 * `References` (nearest first) that is a message of this account sent from that domain. A
 * candidate in SES's form names the message through the record the sender wrote when SES accepted
 * it (its account must be this one too); never another account's message.
 */
async function threadOf(parsed: ParsedMessage, accountId: string): Promise<string | undefined> {
  const candidates = threadCandidates(parsed.inReplyTo, parsed.references);
  if (candidates.length === 0) return undefined;
  const sesIds = candidates.flatMap((candidate) =>
    candidate.kind === 'ses' ? [candidate.sesMessageId] : [],
  );
  const sent = await getSesMessageIds(sesIds);
  // Every candidate as the message it names (SES ids through their record; unknown ones drop out).
  const named = candidates.flatMap((candidate) => {
    if (candidate.kind === 'message') return [candidate];
    const record = sent.get(candidate.sesMessageId);
    if (record === undefined || record.account_id !== accountId) return [];
    return [{ messageUuid: record.message_uuid, domain: record.tenant }];
  });
  if (named.length === 0) return undefined;
  const messages = await getMessages([...new Set(named.map((candidate) => candidate.messageUuid))]);
  return named.find((candidate) => {
    const message = messages.get(candidate.messageUuid);
    return message?.account_id === accountId && message.tenant === candidate.domain;
  })?.messageUuid;
}

function itemFor(input: {
  uuid: string;
  siblings: string[];
  receipt: Receipt;
  recipient: string;
  domain: DomainRecord;
  parsed: ParsedMessage;
  size: number;
  contentKey: string | undefined;
  replyTo: string | undefined;
  expiresAt: number;
}): InboundItem {
  const { parsed, receipt } = input;
  const mailboxHash = mailboxHashOf(input.recipient);
  const optional = <K extends keyof InboundItem>(name: K, value: InboundItem[K] | undefined) =>
    value === undefined ? {} : { [name]: value };
  return {
    inbound_uuid: input.uuid,
    account_id: input.domain.accountId,
    domain: input.domain.domain,
    recipient: input.recipient,
    received_at: receipt.receivedAt,
    ses_message_id: receipt.messageId,
    ...optional('from', parsed.from),
    ...(parsed.to.length === 0 ? {} : { to: parsed.to }),
    ...(parsed.cc.length === 0 ? {} : { cc: parsed.cc }),
    ...optional('subject', parsed.subject),
    ...optional('message_id', parsed.messageId),
    ...optional('in_reply_to', parsed.inReplyTo),
    ...optional('reply_to_message_uuid', input.replyTo),
    ...optional('mailbox_hash', mailboxHash ?? undefined),
    auth: receipt.auth,
    spam: { verdict: receipt.spam },
    ...(parsed.attachments.length === 0 ? {} : { attachments: parsed.attachments }),
    ...optional('parse_error', parsed.parseError),
    objects: {
      raw: receipt.objectKey,
      ...(input.contentKey === undefined ? {} : { content: input.contentKey }),
    },
    size: input.size,
    ...(input.siblings.length === 0 ? {} : { siblings: input.siblings }),
    expires_at: input.expiresAt,
  };
}
