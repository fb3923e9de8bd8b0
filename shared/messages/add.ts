import { randomUUID } from 'node:crypto';
import { type DomainRecord, getDomain, notReadyMessage } from '../domains/index.ts';
import { requireDomainAllowed } from '../platform/auth/domain-restriction.ts';
import { Code } from '../platform/errors/catalogue.ts';
import { type ErrorDetail, isServiceError, ServiceError } from '../platform/errors/service-error.ts';
import { requestLimits } from '../platform/http/limits.ts';
import { type Address, domainOf } from '../platform/mail/addresses.ts';
import { HtmlToTextLimitError, textFromHtml } from '../platform/mail/text-from-html.ts';
import { deleteObjects, putObjects, type StoredObject } from '../platform/objects/objects.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { countMessages } from '../platform/observability/metrics.ts';
import { parseDateWithOffset } from '../platform/time/format.ts';
import { getTemplateHeadAndDomain, type RenderedMessage, type TemplateHead } from '../templates/index.ts';
import { deliverySettings } from './config.ts';
import { readEml } from './eml.ts';
import { idempotencyClaim, replayOf } from './idempotency.ts';
import { notYourDomainMessage } from './model/domain-ownership.ts';
import type { Metadata, Tag } from './model/labels.ts';
import {
  type ContentKind,
  estimatedItemBytes,
  type MessageItem,
  maxCreatedItemBytes,
  planContent,
  recipientsOf,
} from './model/message.ts';
import { maxHoldMs, sendAtProblem } from './model/scheduling.ts';
import { actionTransitions, type CreationMode, initialStatus, type MessageStatus } from './model/statuses.ts';
import { unsubscribePlaceholder } from './model/stream.ts';
import { streamProblems } from './model/stream-checks.ts';
import { type MessageAddRequest, maxAttachments, maxRecipients } from './schemas.ts';
import { searchEntriesOf } from './store/message-index.ts';
import {
  createMessage,
  deleteMessageParts,
  getIdempotencyRecord,
  getMessage,
  type IdempotencyClaim,
  type MessageParts,
  putBatchMessageParts,
  putMessageParts,
  transitionMessage,
} from './store/messages.ts';
import { enqueueSend } from './store/send-queue.ts';

export interface AddOptions {
  account: string;
  /** An API key's domain restriction: the only domains it may send from (else 113). */
  domains?: readonly string[] | undefined;
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

/**
 * The caller's sending domains, each looked up once per request (a batch names the same few
 * domains in every message). Every domain a message claims to come from must be one of them, else
 * 113, with a detail naming the field.
 */
export class SendingDomains {
  readonly account: string;
  readonly #restriction: readonly string[] | undefined;
  readonly #owners = new Map<string, Promise<string | undefined>>();
  /** Why a domain added through the API may not send yet (111), per domain read here. */
  readonly #notReady = new Map<string, Promise<string | undefined>>();
  /** `restriction`: an API key's domains (shared/platform/auth/domain-restriction.ts); none for a JWT. */
  constructor(account: string, restriction?: readonly string[]) {
    this.account = account;
    this.#restriction = restriction;
  }

  /** Whether `domain`'s owner is read (or being read) already. */
  knows(domain: string): boolean {
    return this.#owners.has(domain);
  }

  /** The owner of `domain` as read together with another record (a template's, MessageTemplates). */
  learn(domain: string, record: Promise<DomainRecord | undefined>): void {
    if (this.#owners.has(domain)) return;
    this.#owners.set(
      domain,
      record.then((found) => found?.accountId),
    );
    this.#notReady.set(
      domain,
      record.then((found) => (found === undefined ? undefined : notReadyMessage(found))),
    );
  }

  async require(emails: readonly string[], field: string): Promise<void> {
    for (const domain of new Set(emails.map(domainOf))) {
      let owner = this.#owners.get(domain);
      if (owner === undefined) {
        const record = getDomain(domain);
        owner = record.then((found) => found?.accountId);
        this.#owners.set(domain, owner);
        this.#notReady.set(
          domain,
          record.then((found) => (found === undefined ? undefined : notReadyMessage(found))),
        );
      }
      if ((await owner) !== this.account) {
        const message = notYourDomainMessage(domain, this.account);
        throw new ServiceError(Code.AccessDenied, message, { details: [{ field, message }] });
      }
      requireDomainAllowed({ domains: this.#restriction }, domain, field);
      const missing = await this.#notReady.get(domain);
      if (missing !== undefined) {
        throw new ServiceError(Code.MethodValidation, missing, { details: [{ field, message: missing }] });
      }
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
async function enqueue(uuid: string, account: string): Promise<void> {
  try {
    await enqueueSend(uuid, account);
  } catch (error) {
    log('warn', 'enqueue failed; the dispatcher will re-enqueue from the due index', {
      message_uuid: uuid,
      ...describeError(error),
    });
  }
}

/**
 * The templates a request's messages name (docs/templates.md), one per request like
 * `SendingDomains`: each message's template is rendered while its other checks run (its record is
 * read with the sender's domain in one round trip), and a batch reads each template record once.
 * The template module (Handlebars) is imported only when a message names a template.
 */
export class MessageTemplates {
  readonly account: string;
  readonly #heads = new Map<string, Promise<TemplateHead | undefined>>();
  /** A batch's messages render against one shared limit (docs/security.md, "Limits"). */
  readonly #batch: { remaining: number } | undefined;
  constructor(account: string, options: { batch?: boolean } = {}) {
    this.account = account;
    this.#batch = options.batch === true ? { remaining: requestLimits.maxBodyBytes } : undefined;
  }

  /**
   * Starts rendering; awaited, and its errors raised, where the template's turn comes (or dropped).
   * When neither the template record nor the sender's domain is read yet, the two are read in one
   * BatchGetItem, and `domains` learns the owner from it.
   */
  render(
    template: NonNullable<MessageAddRequest['template']>,
    sender: string,
    domains: SendingDomains,
    attachmentBytes = 0,
  ): Promise<RenderedMessage> {
    const domain = domainOf(sender);
    if (!this.#heads.has(template.alias) && !domains.knows(domain)) {
      const both = getTemplateHeadAndDomain(this.account, template.alias, domain);
      this.#heads.set(
        template.alias,
        both.then((read) => read.head),
      );
      domains.learn(
        domain,
        both.then((read) => read.domain),
      );
    }
    // Each render starts on a turn of the event loop of its own: a batch's renders would otherwise
    // run back to back in one turn (their awaits are already settled) and hold every other request.
    const rendering = nextTurn()
      .then(() => import('../templates/render/index.ts'))
      .then((templates) =>
        templates.renderForMessage(this.account, template, 'template', this.#heads, {
          reserved: attachmentBytes,
          ...(this.#batch === undefined ? {} : { batch: this.#batch }),
        }),
      );
    rendering.catch(() => undefined);
    return rendering;
  }
}

/**
 * The template's model with `unsubscribe_url` set to the placeholder itself, so that a template's
 * `{{{unsubscribe_url}}}` renders to the placeholder, which the sender replaces with the recipient's
 * own link (docs/streams.md): the link is sealed when the message is sent, not when it is accepted.
 */
function withUnsubscribePlaceholder(
  template: NonNullable<MessageAddRequest['template']>,
): NonNullable<MessageAddRequest['template']> {
  return { ...template, model: { ...(template.model ?? {}), unsubscribe_url: unsubscribePlaceholder } };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** POST /message/add-1.0: a new message, or manual-send / manual-cancel of a held one. */
export async function addMessage(input: MessageAddRequest, options: AddOptions): Promise<AddResult> {
  const now = options.now ?? new Date();
  const claim = idempotencyClaim(options.idempotencyKey, options.body, now);
  const domains = new SendingDomains(options.account, options.domains);
  const scheduling = input.scheduling ?? { mode: 'immediate' as const };
  if (scheduling.mode === 'manual-send' || scheduling.mode === 'manual-cancel') {
    // A release or cancel may name its sender too; it is checked like any other.
    if (input.message_sender !== undefined)
      await domains.require([input.message_sender.email], 'message_sender');
    return actOnMessage(scheduling.mode, scheduling.message_uuid.toLowerCase(), options, claim, now);
  }
  if (input.template !== undefined) {
    // A retry of an accepted request answers as the first did, whatever the template has become since.
    const known = await replayIfKnown(options, claim, now);
    if (known !== undefined) return known;
  }
  const prepared = await prepareNewMessage(input, domains, now, new MessageTemplates(options.account));
  return createNewMessage(prepared, options, claim, now);
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
  if (to === 'queued') await enqueue(uuid, options.account);
  return { message_uuid: uuid, status: to };
}

const decode = (base64: string) => Buffer.from(base64, 'base64');

type Content = Exclude<MessageAddRequest['content'], undefined>;

/**
 * A new message that passed every check of add: what it will be stored as, before it has a uuid.
 * Add and every batch item are prepared here (`prepareNewMessage`), so a batch item is exactly
 * what add accepts, with the same checks in the same order.
 */
export interface PreparedMessage {
  sender: Address;
  from: Address[];
  to: Address[];
  cc: Address[];
  bcc: Address[];
  replyTo: Address[];
  subject: string;
  content: Content;
  emlBytes?: Buffer;
  attachments: NonNullable<MessageAddRequest['attachments']>;
  headers: Record<string, string>;
  tags: Tag[];
  metadata: Metadata;
  mode: CreationMode;
  status: MessageStatus;
  sendAt?: Date;
  /** The template the subject and content were rendered from. */
  template?: RenderedMessage['template'];
  /** HTML-only content's text part, derived once on acceptance and stored with it. */
  derivedText?: string;
  stream: 'transactional' | 'broadcast';
  listId?: string;
  tracking?: { opens?: boolean; clicks?: boolean };
}

/**
 * The text part of HTML-only content (docs/messages.md, "Content"): derived once here and stored
 * beside the HTML, so the sender and the content route read it instead of converting again. HTML
 * past the conversion's limits (docs/security.md, "Limits") is 107 naming `content.html`.
 */
async function derivedTextOf(html: string): Promise<string> {
  try {
    return await textFromHtml(html);
  } catch (error) {
    if (error instanceof HtmlToTextLimitError || error instanceof RangeError) {
      throw invalid([
        {
          field: 'content.html',
          message: error instanceof RangeError ? 'The HTML is too complex to convert to text' : error.message,
        },
      ]);
    }
    throw error;
  }
}

/**
 * Every check of a new message beyond its schema: the send time, the EML's own headers and
 * attachments, the recipients, sender ownership (113) and the size of the stored record. Nothing
 * is written. `input.scheduling` is a creation mode (immediate, scheduled, manual-wait).
 */
export async function prepareNewMessage(
  input: MessageAddRequest,
  domains: SendingDomains,
  now: Date,
  templates: MessageTemplates,
): Promise<PreparedMessage> {
  const sender = input.message_sender as Address;
  const stream = input.stream ?? 'transactional';
  const rendering =
    input.template === undefined
      ? undefined
      : templates.render(
          withUnsubscribePlaceholder(input.template),
          sender.email,
          domains,
          (input.attachments ?? []).reduce((sum, attachment) => sum + attachment.content.length, 0),
        );
  await domains.require([sender.email], 'message_sender');
  const scheduling = input.scheduling ?? { mode: 'immediate' as const };
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
  const rendered = rendering === undefined ? undefined : await rendering;
  const content = rendered?.content ?? (input.content as Content);

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
    await domains.require(
      facts.claimedSenders.map((address) => address.email),
      'content.eml',
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
  const streamIssues = streamProblems({
    stream,
    to,
    cc,
    bcc,
    content,
    ...(emlBytes === undefined ? {} : { eml: emlBytes }),
    templated: rendered !== undefined,
  });
  if (streamIssues.length > 0) throw invalid(streamIssues);
  const recipientCount = to.length + cc.length + bcc.length;
  if (recipientCount === 0)
    throw invalid([{ field: 'to', message: 'At least one recipient in to, cc or bcc' }]);
  if (recipientCount > maxRecipients) {
    throw invalid([
      { field: 'to', message: `At most ${maxRecipients} recipients in to, cc and bcc together` },
    ]);
  }
  await domains.require(
    from.map((address) => address.email),
    'from',
  );

  const headers = input.headers ?? {};
  const tags = input.tags ?? [];
  const metadata = input.metadata ?? {};
  const attachments = input.attachments ?? [];
  const recordBytes =
    estimatedItemBytes({
      from,
      to,
      cc,
      bcc,
      reply_to: replyTo,
      subject,
      headers,
      tags,
      metadata,
      attachments: attachments.map((attachment) => ({
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
        message: `Addresses, names, subject, headers, tags, metadata and attachment names need ${Math.ceil(recordBytes / 1024)} KB in the message record; at most ${maxCreatedItemBytes / 1024} KB`,
      },
    ]);
  }
  const derivedText = content.kind === 'html_only' ? await derivedTextOf(content.html) : undefined;
  return {
    sender,
    from,
    to,
    cc,
    bcc,
    replyTo,
    subject,
    content,
    ...(derivedText === undefined ? {} : { derivedText }),
    ...(emlBytes === undefined ? {} : { emlBytes }),
    attachments,
    headers,
    tags,
    metadata,
    mode,
    status: initialStatus[mode],
    ...(sendAt === undefined ? {} : { sendAt }),
    ...(rendered === undefined ? {} : { template: rendered.template }),
    stream,
    ...(input.list_id === undefined ? {} : { listId: input.list_id }),
    ...(input.tracking === undefined ? {} : { tracking: input.tracking }),
  };
}

/** A prepared message with its uuid, laid out for storage: the item, its parts and its S3 object. */
export interface NewMessage {
  item: MessageItem;
  dueAt: string | undefined;
  parts: MessageParts;
  objects: StoredObject[];
}

/** Lays out a prepared message under `uuid`, created at `now` (pure: the same input, the same items). */
export function newMessage(prepared: PreparedMessage, uuid: string, account: string, now: Date): NewMessage {
  const { content } = prepared;
  const planned = planContent(uuid, {
    ...(content.kind === 'text_only' || content.kind === 'mixed' ? { text: content.text } : {}),
    ...(prepared.derivedText === undefined ? {} : { text: prepared.derivedText }),
    ...(content.kind === 'html_only' || content.kind === 'mixed' ? { html: content.html } : {}),
    ...(prepared.emlBytes === undefined ? {} : { eml: prepared.emlBytes }),
    attachments: prepared.attachments.map((attachment) => ({
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
  const { mode, status, sendAt } = prepared;
  const item: MessageItem = {
    message_uuid: uuid,
    account_id: account,
    tenant: domainOf(prepared.sender.email),
    message_sender: prepared.sender.email,
    from: prepared.from,
    to: prepared.to,
    cc: prepared.cc,
    bcc: prepared.bcc,
    reply_to: prepared.replyTo,
    subject: prepared.subject,
    content_kind: content.kind as ContentKind,
    headers: prepared.headers,
    tags: prepared.tags,
    metadata: prepared.metadata,
    content: planned.content,
    attachments: planned.attachments,
    scheduling: sendAt === undefined ? { mode } : { mode, send_at: sendAt.toISOString() },
    status,
    recipients: recipientsOf({ to: prepared.to, cc: prepared.cc, bcc: prepared.bcc }, at),
    history: [{ status, at, detail: mode }],
    created_at: at,
    updated_at: at,
    attempts: 0,
    ...(prepared.template === undefined ? {} : { template: prepared.template }),
    ...(prepared.stream === 'broadcast' ? { stream: 'broadcast' as const } : {}),
    ...(prepared.listId === undefined ? {} : { list_id: prepared.listId }),
    ...(prepared.tracking === undefined ? {} : { tracking: prepared.tracking }),
  };
  // queued: when the dispatcher re-enqueues it if no sender claimed it; scheduled: send_at;
  // waiting: the end of the longest hold, when the dispatcher fails it (docs/messages.md).
  const dueAt =
    status === 'queued'
      ? new Date(now.getTime() + deliverySettings.reconcileAfterMs).toISOString()
      : status === 'waiting'
        ? new Date(now.getTime() + maxHoldMs).toISOString()
        : sendAt?.toISOString();
  return {
    item,
    dueAt,
    parts: {
      entries: searchEntriesOf(item),
      ...(planned.bodies === undefined ? {} : { bodies: planned.bodies }),
    },
    objects,
  };
}

/** S3 PUTs in flight at once for a batch's objects. */
const objectConcurrency = 16;

/**
 * Writes what goes before the message items: the S3 objects, then the content items and search
 * entries (`batched`: with BatchWriteItem, for a batch). A message item written afterwards never
 * lacks its bodies or its entries.
 */
export async function storeParts(messages: readonly NewMessage[], batched = false): Promise<void> {
  const objects = messages.flatMap((message) => message.objects);
  for (let start = 0; start < objects.length; start += objectConcurrency)
    await putObjects(objects.slice(start, start + objectConcurrency));
  const parts = messages.map((message) => message.parts);
  await (batched ? putBatchMessageParts(parts) : putMessageParts(parts));
}

/** Removes the parts of messages that were not stored after all (best effort: orphans are harmless). */
export async function dropParts(messages: readonly NewMessage[]): Promise<void> {
  const objects = messages.flatMap((message) => message.objects.map((object) => object.key));
  if (objects.length > 0) await deleteObjects(objects).catch(() => undefined);
  await deleteMessageParts(messages.map(({ parts }) => parts)).catch(() => undefined);
}

async function createNewMessage(
  prepared: PreparedMessage,
  options: AddOptions,
  claim: IdempotencyClaim | undefined,
  now: Date,
): Promise<AddResult> {
  const { status, mode } = prepared;
  const known = await replayIfKnown(options, claim, now);
  if (known !== undefined) return known;
  if (options.dryRun) return { message_uuid: null, status, dry_run: true };

  const uuid = randomUUID();
  const message = newMessage(prepared, uuid, options.account, now);
  // The content and search entries first, then the message: a message never lacks its bodies.
  await storeParts([message]);
  let created: Awaited<ReturnType<typeof createMessage>>;
  try {
    created = await createMessage(message.item, message.dueAt, claim);
  } catch (error) {
    // An unreachable database (code 4) may still have committed the write before the connection
    // broke: keep the parts then, so a message that exists never lacks them. Orphaned parts are
    // harmless; a message without its bodies would fail when sent.
    if (!(isServiceError(error) && error.code === Code.DatabaseUnavailable)) await dropParts([message]);
    throw error;
  }
  if (!created.created) {
    // A concurrent request with the same key won: drop this one's parts, answer as the first did.
    await dropParts([message]);
    return replayOf(created.replay, claim as IdempotencyClaim);
  }
  log('info', 'message state', { message_uuid: uuid, account: options.account, status, event: mode });
  countMessages('accepted');
  if (status === 'queued') await enqueue(uuid, options.account);
  return { message_uuid: uuid, status };
}
