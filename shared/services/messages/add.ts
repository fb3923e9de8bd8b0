import { randomUUID } from 'node:crypto';
import { type Address, domainOf } from '../../domain/messages/addresses.ts';
import {
  type ContentKind,
  estimatedItemBytes,
  type MessageItem,
  maxCreatedItemBytes,
  planContent,
  recipientsOf,
} from '../../domain/messages/message.ts';
import { maxHoldMs, sendAtProblem } from '../../domain/messages/scheduling.ts';
import { actionTransitions, type CreationMode, initialStatus } from '../../domain/messages/statuses.ts';
import { Code } from '../../errors/catalogue.ts';
import { type ErrorDetail, isServiceError, ServiceError } from '../../errors/service-error.ts';
import { describeError, log } from '../../observability/log.ts';
import { countMessages } from '../../observability/metrics.ts';
import { getDomain } from '../../repositories/domains.ts';
import {
  createMessage,
  deleteContentItems,
  deleteObjects,
  enqueueForSending,
  getIdempotencyRecord,
  getMessage,
  type IdempotencyClaim,
  putContentItem,
  putObjects,
  type StoredObject,
  transitionMessage,
} from '../../repositories/messages.ts';
import { type MessageAddRequest, maxAttachments, maxRecipients } from '../../schemas/messages.ts';
import { parseDateWithOffset } from '../../time/format.ts';
import { deliverySettings } from '../delivery/settings.ts';
import type { RenderedMessage } from '../templates.ts';
import { readEml } from './eml.ts';
import { idempotencyClaim, replayOf } from './idempotency.ts';

export interface AddOptions {
  account: string;
  dryRun: boolean;
  /** The `Idempotency-Key` header, if any. */
  idempotencyKey: string | undefined;
  /** The parsed JSON body, for the idempotency body hash. */
  body: unknown;
  now?: Date;
}

export interface AddResult {
  message_uuid: string | null;
  status: string;
  dry_run?: true;
}

/** Ids, keys, dates, status and index attributes of a message item: well under this. */
const fixedItemBytes = 2048;

const invalid = (details: ErrorDetail[]) => new ServiceError(Code.InvalidInput, undefined, { details });

/** Every domain named must be one of the caller's sending domains (else 113). */
async function requireOwnDomains(account: string, emails: readonly string[]): Promise<void> {
  const domains = [...new Set(emails.map(domainOf))];
  for (const domain of domains) {
    const record = await getDomain(domain);
    if (record?.accountId !== account) {
      throw new ServiceError(Code.AccessDenied, `${domain} is not one of your sending domains`);
    }
  }
}

/** True when both lists name the same mailboxes (addresses compare case-insensitively). */
function sameMailboxes(a: readonly Address[], b: readonly Address[]): boolean {
  const set = (list: readonly Address[]) => new Set(list.map((address) => address.email.toLowerCase()));
  const left = set(a);
  const right = set(b);
  return left.size === right.size && [...left].every((email) => right.has(email));
}

/** Enqueues a queued message; a failure is logged, and the dispatcher re-enqueues it from the due index. */
async function enqueue(uuid: string): Promise<void> {
  try {
    await enqueueForSending(uuid);
  } catch (error) {
    log('warn', 'enqueue failed; the dispatcher will re-enqueue from the due index', {
      message_uuid: uuid,
      ...describeError(error),
    });
  }
}

/**
 * Renders a message's template (docs/templates.md) while the other checks run: its reads overlap the
 * sender-domain check. It is awaited, and its errors raised, where the template's turn comes; when an
 * earlier check fails first, its result is dropped.
 */
function startRendering(account: string, template: NonNullable<MessageAddRequest['template']>) {
  const rendering = import('../templates.ts').then((templates) =>
    templates.renderForMessage(account, template),
  );
  rendering.catch(() => undefined);
  return rendering;
}

/** POST /message/add-1.0: a new message, or manual-send / manual-cancel of a held one. */
export async function addMessage(input: MessageAddRequest, options: AddOptions): Promise<AddResult> {
  const now = options.now ?? new Date();
  const claim = idempotencyClaim(options.idempotencyKey, options.body, now);
  const rendering =
    input.template === undefined ? undefined : startRendering(options.account, input.template);
  if (input.message_sender !== undefined)
    await requireOwnDomains(options.account, [input.message_sender.email]);
  const scheduling = input.scheduling ?? { mode: 'immediate' as const };
  if (scheduling.mode === 'manual-send' || scheduling.mode === 'manual-cancel') {
    return actOnMessage(scheduling.mode, scheduling.message_uuid.toLowerCase(), options, claim, now);
  }
  return createNewMessage(input, scheduling, options, claim, now, rendering);
}

async function replayIfKnown(
  options: AddOptions,
  claim: IdempotencyClaim | undefined,
  now: Date,
): Promise<AddResult | undefined> {
  if (claim === undefined) return undefined;
  const stored = await getIdempotencyRecord(options.account, claim.key, now);
  if (stored === undefined) return undefined;
  const replay = replayOf(stored, claim);
  return options.dryRun ? { ...replay, dry_run: true } : replay;
}

async function actOnMessage(
  mode: 'manual-send' | 'manual-cancel',
  uuid: string,
  options: AddOptions,
  claim: IdempotencyClaim | undefined,
  now: Date,
): Promise<AddResult> {
  const known = await replayIfKnown(options, claim, now);
  if (known !== undefined) return known;
  const { from, to } = actionTransitions[mode];
  const notFound = () =>
    new ServiceError(Code.NotFound, 'No such message', {
      details: [{ field: 'scheduling.message_uuid', message: 'Unknown message' }],
    });
  const wrongState = (status: string) =>
    new ServiceError(
      Code.MethodValidation,
      `${mode} needs a message that is ${from.join(' or ')}; it is ${status}`,
      {
        details: [{ field: 'scheduling.message_uuid', message: `Message is ${status}` }],
      },
    );
  if (options.dryRun) {
    const item = await getMessage(uuid);
    if (item === undefined || item.account_id !== options.account) throw notFound();
    if (!from.includes(item.status)) throw wrongState(item.status);
    return { message_uuid: uuid, status: to, dry_run: true };
  }
  const at = now.toISOString();
  const result = await transitionMessage(
    {
      uuid,
      account: options.account,
      from,
      to,
      entry: { status: to, at, detail: mode },
      dueAt:
        to === 'queued' ? new Date(now.getTime() + deliverySettings.reconcileAfterMs).toISOString() : null,
    },
    claim,
  );
  if (result.outcome === 'not-found') throw notFound();
  if (result.outcome === 'wrong-state') throw wrongState(result.status);
  if (result.outcome === 'replay' && claim !== undefined) return replayOf(result.stored, claim);
  log('info', 'message state', { message_uuid: uuid, account: options.account, status: to, event: mode });
  if (to === 'queued') await enqueue(uuid);
  return { message_uuid: uuid, status: to };
}

const decode = (base64: string) => Buffer.from(base64, 'base64');

async function createNewMessage(
  input: MessageAddRequest,
  scheduling: Exclude<MessageAddRequest['scheduling'], undefined>,
  options: AddOptions,
  claim: IdempotencyClaim | undefined,
  now: Date,
  rendering: Promise<RenderedMessage> | undefined,
): Promise<AddResult> {
  const sender = input.message_sender as Address;
  const mode = scheduling.mode as CreationMode;
  let sendAt: Date | undefined;
  if (scheduling.mode === 'scheduled') {
    sendAt = parseDateWithOffset(scheduling.send_at);
    const problem =
      sendAt === undefined
        ? /^\d{4}-\d{2}-\d{2}T/.test(scheduling.send_at)
          ? 'send_at is not a real calendar date and time with an offset (e.g. 2026-02-30 does not exist)'
          : 'send_at must be ISO 8601 with an offset'
        : sendAtProblem(sendAt, now);
    if (problem !== undefined) throw invalid([{ field: 'scheduling.send_at', message: problem }]);
  }
  // A template is rendered now (docs/templates.md): the rendered parts are what is stored and sent.
  // A retry of an accepted request answers as the first did, whatever the template has become since.
  let rendered: RenderedMessage | undefined;
  if (rendering !== undefined) {
    const known = await replayIfKnown(options, claim, now);
    if (known !== undefined) return known;
    rendered = await rendering;
  }
  const content = rendered?.content ?? (input.content as Exclude<MessageAddRequest['content'], undefined>);

  let from = input.from ?? [];
  let to = input.to ?? [];
  let cc = input.cc ?? [];
  let bcc = input.bcc ?? [];
  let replyTo = input.reply_to ?? [];
  let subject = rendered?.subject ?? input.subject ?? '';
  let emlBytes: Buffer | undefined;
  if (content.kind === 'eml') {
    emlBytes = decode(content.eml);
    const facts = await readEml(emlBytes);
    if (facts.attachmentCount > maxAttachments) {
      throw invalid([
        {
          field: 'content.eml',
          message: `The message carries ${facts.attachmentCount} attachments; at most ${maxAttachments} per message`,
        },
      ]);
    }
    // Sender ownership: every From and Sender mailbox inside the message is checked, whatever
    // the JSON says, because the message goes out (and is signed) with these headers as they are.
    await requireOwnDomains(
      options.account,
      facts.claimedSenders.map((address) => address.email),
    );
    if (from.length > 0 && !sameMailboxes(from, facts.from)) {
      throw invalid([
        {
          field: 'from',
          message: `from must name the same addresses as the From header of content.eml (${facts.from
            .map((address) => address.email)
            .join(', ')
            .slice(0, 300)})`,
        },
      ]);
    }
    if (to.length + cc.length + bcc.length === 0) ({ to, cc, bcc } = facts);
    if (from.length === 0) from = facts.from;
    if (replyTo.length === 0) replyTo = facts.replyTo;
    if (input.subject === undefined) subject = facts.subject;
  }
  if (from.length === 0) from = [sender];
  const recipientCount = to.length + cc.length + bcc.length;
  if (recipientCount === 0)
    throw invalid([{ field: 'to', message: 'At least one recipient in to, cc or bcc' }]);
  if (recipientCount > maxRecipients) {
    throw invalid([
      { field: 'to', message: `At most ${maxRecipients} recipients in to, cc and bcc together` },
    ]);
  }
  await requireOwnDomains(
    options.account,
    from.map((address) => address.email),
  );

  const recordBytes =
    estimatedItemBytes({
      from,
      to,
      cc,
      bcc,
      reply_to: replyTo,
      subject,
      headers: input.headers ?? {},
      attachments: (input.attachments ?? []).map((attachment) => ({
        filename: attachment.filename,
        content_type: attachment.content_type,
        size: 0,
        offset: 0,
      })),
      recipients: recipientsOf({ to, cc, bcc }, now.toISOString()),
    }) + fixedItemBytes;
  if (recordBytes > maxCreatedItemBytes) {
    throw invalid([
      {
        field: '(body)',
        message: `Addresses, names, subject, headers and attachment names need ${Math.ceil(recordBytes / 1024)} KB in the message record; at most ${maxCreatedItemBytes / 1024} KB`,
      },
    ]);
  }

  const status = initialStatus[mode];
  const known = await replayIfKnown(options, claim, now);
  if (known !== undefined) return known;
  if (options.dryRun) return { message_uuid: null, status, dry_run: true };

  const uuid = randomUUID();
  const planned = planContent(uuid, {
    ...(content.kind === 'text_only' || content.kind === 'mixed' ? { text: content.text } : {}),
    ...(content.kind === 'html_only' || content.kind === 'mixed' ? { html: content.html } : {}),
    ...(emlBytes === undefined ? {} : { eml: emlBytes }),
    attachments: (input.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      content_type: attachment.content_type,
      body: decode(attachment.content),
    })),
  });
  const objects: StoredObject[] =
    planned.object === undefined || planned.content.store !== 's3'
      ? []
      : [{ key: planned.content.key, body: planned.object, contentType: 'application/octet-stream' }];

  const at = now.toISOString();
  const item: MessageItem = {
    message_uuid: uuid,
    account_id: options.account,
    tenant: domainOf(sender.email),
    message_sender: sender.email,
    from,
    to,
    cc,
    bcc,
    reply_to: replyTo,
    subject,
    content_kind: content.kind as ContentKind,
    headers: input.headers ?? {},
    content: planned.content,
    attachments: planned.attachments,
    scheduling: sendAt === undefined ? { mode } : { mode, send_at: sendAt.toISOString() },
    status,
    recipients: recipientsOf({ to, cc, bcc }, at),
    history: [{ status, at, detail: mode }],
    created_at: at,
    updated_at: at,
    attempts: 0,
    ...(rendered === undefined ? {} : { template: rendered.template }),
  };
  // queued: when the dispatcher re-enqueues it if no sender claimed it; scheduled: send_at;
  // waiting: the end of the longest hold, when the dispatcher fails it (docs/messages.md).
  const dueAt =
    status === 'queued'
      ? new Date(now.getTime() + deliverySettings.reconcileAfterMs).toISOString()
      : status === 'waiting'
        ? new Date(now.getTime() + maxHoldMs).toISOString()
        : sendAt?.toISOString();

  // The content first (object or content item), then the message: a message never lacks its bodies.
  if (objects.length > 0) await putObjects(objects);
  if (planned.bodies !== undefined) await putContentItem(uuid, planned.bodies);
  const dropContent = async () => {
    if (objects.length > 0) await deleteObjects(objects.map((object) => object.key)).catch(() => undefined);
    if (planned.bodies !== undefined) await deleteContentItems([uuid]).catch(() => undefined);
  };
  let created: Awaited<ReturnType<typeof createMessage>>;
  try {
    created = await createMessage(item, dueAt, claim);
  } catch (error) {
    // An unreachable database (code 4) may still have committed the write before the connection
    // broke: keep the content then, so a message that exists never lacks it. Orphaned content is
    // harmless; a message without its bodies would fail when sent.
    if (!(isServiceError(error) && error.code === Code.DatabaseUnavailable)) await dropContent();
    throw error;
  }
  if (!created.created) {
    // A concurrent request with the same key won: drop this one's content, answer as the first did.
    await dropContent();
    return replayOf(created.replay, claim as IdempotencyClaim);
  }
  log('info', 'message state', { message_uuid: uuid, account: options.account, status, event: mode });
  countMessages('accepted');
  if (status === 'queued') await enqueue(uuid);
  return { message_uuid: uuid, status };
}
