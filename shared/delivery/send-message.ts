import { deliverySettings, type MessageStream, recipientEntry, streamOf } from '../messages/index.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { countMessages } from '../platform/observability/metrics.ts';
import {
  applySuppressions,
  hardBouncesOf,
  type Suppression,
  suppressAutomatically,
  suppressedRecipients,
} from '../suppressions/index.ts';
import { effectiveTracking, isTracked, type TrackingSettings } from '../tracking/index.ts';
import { cachedDomain } from './cached-domain.ts';
import type { Composition } from './compose-message.ts';
import { feedbackTagOf } from './feedback-id.ts';
import { loadComposer } from './load-composer.ts';
import type { SigningKey } from './mail/dkim-signer.ts';
import { bounceAddress } from './mail/envelope.ts';
import { mailTransport } from './mail/mail-transport.ts';
import { SigningError } from './mail/signing-error.ts';
import { type MailTransport, TransportError, type TransportResult } from './mail/transport.ts';
import {
  applyRecipientUpdates,
  claimDecision,
  type HistoryEntry,
  messageStatusFromRecipients,
  needsMessageEntry,
  type Recipient,
  type RecipientUpdate,
} from './model/status.ts';
import { authorizeSend, SendRefused } from './send-authorization.ts';
import { recordSesMessageId } from './ses-message-ids.ts';
import { activeSigningKeys } from './signing-keys.ts';
import {
  type ComposedRecord,
  claimMessage,
  type DeliveryMessage,
  getDeliveryMessage,
  MissingObjectError,
  markFailed,
  readMessageContent,
  recordCopyProgress,
  recordOutcome,
  releaseClaim,
  type SentCopy,
} from './store/message-delivery.ts';
import { mergedResults, recipientIndexOf, sendTrackedCopies, type TrackedRound } from './tracked-copies.ts';

/**
 * One message from the send queue: claim it, compose it (or take the EML), sign it with the
 * domain's active DKIM key, hand it to the relay, and record what the relay said.
 *
 * - `done`: nothing more to do for this queue entry (sent, failed for good, or skipped);
 * - `retry`: leave the queue entry for redelivery (a transient failure, or another sender holds it).
 */
export type SendResult = { result: 'done'; status: string } | { result: 'retry'; reason: string };

export interface SendDependencies {
  transport?: () => Promise<MailTransport>;
  /** The domain's signing keys, only if `owner` owns the domain (default: the DKIM key store). */
  signingKeys?: (domain: string, owner: string) => Promise<SigningKey[]>;
  /** The send-time authorization (default: account active, domain still the account's). */
  authorize?: (message: DeliveryMessage, nowMs: number) => Promise<void>;
  now?: () => number;
  leaseMs?: number;
  /** The pre-send check: which recipients the account suppresses (default: the suppression list). */
  suppressions?: (
    account: string,
    emails: readonly string[],
    stream: MessageStream,
  ) => Promise<Map<string, Suppression>>;
}

export async function sendQueuedMessage(
  messageUuid: string,
  deps: SendDependencies = {},
): Promise<SendResult> {
  const now = deps.now ?? Date.now;
  const composer = loadComposer();
  const current = await getDeliveryMessage(messageUuid);
  const decision = claimDecision(
    current === undefined
      ? undefined
      : { status: current.status, lease_until: current.lease_until, send_at: current.scheduling?.send_at },
    now(),
  );
  if (decision.action === 'skip') {
    log('info', 'send skipped', { message_uuid: messageUuid, reason: decision.reason });
    return { result: 'done', status: current?.status ?? 'missing' };
  }
  if (decision.action === 'retry-later' || current === undefined) {
    return { result: 'retry', reason: decision.action === 'retry-later' ? decision.reason : 'missing' };
  }
  const claimed = await claimMessage(current, {
    from: decision.from,
    nowMs: now(),
    leaseMs: deps.leaseMs ?? deliverySettings.leaseMs,
    detail:
      decision.from === 'processing'
        ? `send attempt ${(current.attempts ?? 0) + 1} (the previous lease expired)`
        : undefined,
  });
  if (claimed === undefined) return { result: 'retry', reason: 'another sender claimed it first' };
  log('info', 'message state change', {
    message_uuid: messageUuid,
    status: 'processing',
    attempt: claimed.attempts,
  });

  let transport: MailTransport;
  let outcome: TransportResult;
  let composed: ComposedRecord;
  let checked: ReturnType<typeof applySuppressions>;
  let tracked: TrackedRound | undefined;
  let copies: CopyRecorder | undefined;
  try {
    // The account and the domain may have changed since the message was accepted.
    await (deps.authorize ?? authorizeSend)(claimed, now());
    // The pre-send check: recipients on the account's suppression list get no SMTP or SES attempt.
    const recipients = recipientsOf(claimed);
    // A tracked copy an earlier attempt got accepted is sent: its recipient is not checked again.
    const copied = new Set((claimed.composed?.copies ?? []).map((copy) => copy.recipient));
    const listed = await (deps.suppressions ?? suppressedRecipients)(
      claimed.account_id,
      recipients
        .filter((recipient, index) => recipient.status === 'pending' && !copied.has(index))
        .map((recipient) => recipient.email),
      streamOf(claimed),
    );
    checked = applySuppressions(recipients, listed, new Date(now()).toISOString());
    if (checked.allSuppressed) return recordAllSuppressed(claimed, checked, now());
    transport = await (deps.transport ?? mailTransport)();
    const sentAt = now();
    const build = await signedMessageBuilder(
      claimed,
      transport,
      deps.signingKeys ?? activeSigningKeys,
      composer,
      sentAt,
    );
    // The domain's own MAIL FROM domain, from the record the send-time check just read (cached).
    const domainMailFrom = (await cachedDomain(claimed.tenant, sentAt))?.mailFrom;
    const mailTo = (to: string[], raw: Buffer) =>
      (transport as MailTransport).send({
        messageUuid,
        envelope: { from: bounceAddress(messageUuid, claimed.tenant, domainMailFrom), to },
        sender: claimed.message_sender,
        raw,
        tags: claimed.tags ?? [],
      });
    // An earlier attempt's copies fix the settings: every copy of a message is tracked alike.
    const settings = claimed.composed?.tracking ?? (await trackingOf(claimed, sentAt));
    if (!isTracked(settings)) {
      const built = await build();
      composed = built.composed;
      outcome = await mailTo(checked.sendTo, built.raw);
    } else {
      // Tracked: one copy per recipient, its links and pixel naming that recipient (docs/tracking.md).
      const already = claimed.composed?.copies ?? [];
      copies = copyRecorder({ ...claimed, recipients: checked.recipients }, checked.history, settings, now);
      const round = await sendTrackedCopies({
        sendTo: checked.sendTo,
        recipients,
        already,
        settings,
        build,
        mailTo,
        recordCopy: copies.record,
      });
      // Nothing sent yet: a failure like any other. Once copies are out, they are recorded first.
      if (round.interrupted !== undefined && round.results.length === 0 && already.length === 0) {
        throw round.interrupted;
      }
      tracked = round;
      composed = {
        ...(round.composed ?? (await build()).composed),
        tracking: { opens: settings.opens, clicks: settings.clicks },
        copies: [...already, ...round.accepted],
      };
      outcome = mergedResults(round.results);
    }
  } catch (error) {
    return handleFailure(claimed, error, now());
  }
  // SES replaced the Message-ID: which message its id names, for threading replies (docs/inbound.md).
  await recordSesMessageId(claimed, transport, outcome, now());
  // After tracked copies written one by one, the message as the last of them left it.
  const message = copies?.state.message ?? { ...claimed, recipients: checked.recipients };
  const suppressionHistory = copies?.state.unwritten ?? checked.history;
  if (tracked?.interrupted instanceof LeaseLost) {
    log('warn', 'send attempt stopped between tracked copies: the lease is no longer this sender’s', {
      message_uuid: messageUuid,
      copies_sent: tracked.accepted.length,
    });
    return { result: 'retry', reason: tracked.interrupted.message };
  }
  if (tracked?.interrupted !== undefined) {
    return recordInterruptedRound(message, tracked, composed, tracked.interrupted, now(), suppressionHistory);
  }
  return recordRelayResult(message, outcome, composed, now(), suppressionHistory, {
    perCopy: tracked !== undefined,
  });
}

/** A tracked copy's write found the message no longer held by this sender's lease. */
class LeaseLost extends Error {}

interface CopyRecorder {
  state: { message: DeliveryMessage; unwritten: HistoryEntry[]; copies: SentCopy[] };
  record: (copy: SentCopy, result: TransportResult, composed: ComposedRecord) => Promise<void>;
}

/**
 * Writes each tracked copy the relay accepts before the next one goes out, under the lease: its
 * recipient's status and `sent` entry, and the copy in the composition record (docs/tracking.md,
 * "Copies"). A sender that dies between two copies leaves every accepted copy recorded, so the
 * next attempt sends only the others. The pre-send check's suppression entries go with the first
 * write; `state` is what the writes left, for the round's last write.
 */
function copyRecorder(
  start: DeliveryMessage,
  suppressionHistory: HistoryEntry[],
  settings: TrackingSettings,
  now: () => number,
): CopyRecorder {
  const state = {
    message: start,
    unwritten: suppressionHistory,
    copies: [...(start.composed?.copies ?? [])],
  };
  const record = async (copy: SentCopy, result: TransportResult, composed: ComposedRecord) => {
    const at = new Date(now()).toISOString();
    const step = outcomeFromRelay(state.message, result, at, { perCopy: true, messageEntry: false });
    const copies = [...state.copies, copy];
    const written = await withRetries(
      () =>
        recordCopyProgress(state.message, {
          recipients: step.recipients,
          history: [...state.unwritten, ...step.history],
          composed: { ...composed, tracking: { opens: settings.opens, clicks: settings.clicks }, copies },
        }),
      'recording a tracked copy',
    );
    if (written === undefined) throw new LeaseLost('the lease expired while sending tracked copies');
    state.message = written;
    state.unwritten = [];
    state.copies = copies;
  };
  return { state, record };
}

/**
 * A round of tracked copies stopped by a failure after the relay took some of them: the copies
 * sent are recorded (their recipients' statuses, and which copies they were) with the release, so
 * the retry sends only the others. Once the failure is permanent or the attempts are spent, the
 * recipients still owed a copy fail and the message ends with what its recipients say.
 */
async function recordInterruptedRound(
  message: DeliveryMessage,
  round: TrackedRound,
  composed: ComposedRecord,
  error: unknown,
  nowMs: number,
  suppressionHistory: readonly HistoryEntry[],
): Promise<SendResult> {
  const reason = reasonOf(error);
  const attempts = message.attempts ?? 1;
  const result = mergedResults(round.results);
  if (isPermanent(error) || attempts >= deliverySettings.maxAttempts) {
    const answered = new Set(result.recipients.map((entry) => entry.email.toLowerCase()));
    const owed = message.recipients.filter(
      (recipient) => recipient.status === 'pending' && !answered.has(recipient.email.toLowerCase()),
    );
    const sentCopies = new Set((composed.copies ?? []).map((copy) => copy.recipient));
    const notSent = owed.filter((recipient) => !sentCopies.has(message.recipients.indexOf(recipient)));
    const why = isPermanent(error) ? reason : `${reason} (gave up after ${attempts} attempts)`;
    const final = {
      ...result,
      recipients: [
        ...result.recipients,
        ...notSent.map((recipient) => ({
          email: recipient.email,
          outcome: 'rejected' as const,
          permanent: false,
          response: why,
        })),
      ],
    };
    return recordRelayResult(message, final, composed, nowMs, suppressionHistory, { perCopy: true });
  }
  const at = new Date(nowMs).toISOString();
  await suppressHardBounces(message, result, nowMs);
  const progress = outcomeFromRelay(message, result, at, { perCopy: true });
  const sent = round.accepted.length;
  const detail = `attempt ${attempts}: ${sent} ${sent === 1 ? 'copy' : 'copies'} sent, then ${reason}; will retry the others`;
  const released = await withRetries(() =>
    releaseClaim(message, {
      nowMs,
      retryDueMs: nowMs + deliverySettings.retryTakeoverMs,
      detail,
      progress: {
        recipients: progress.recipients,
        history: [...suppressionHistory, ...progress.history],
        composed,
      },
    }),
  );
  log('warn', 'send attempt interrupted; will retry the copies not sent', {
    message_uuid: message.message_uuid,
    attempt: attempts,
    copies_sent: sent,
    recorded: released !== undefined,
    reason,
    ...describeError(error),
  });
  if (sent > 0) countMessages('sent');
  return { result: 'retry', reason };
}

/** Every recipient is suppressed: the message ends `suppressed` and nothing reaches the relay. */
async function recordAllSuppressed(
  message: DeliveryMessage,
  checked: { recipients: Recipient[]; history: HistoryEntry[] },
  nowMs: number,
): Promise<SendResult> {
  const at = new Date(nowMs).toISOString();
  const recorded = await withRetries(() =>
    recordOutcome(message, {
      status: 'suppressed',
      recipients: checked.recipients,
      history: checked.history,
      at,
    }),
  );
  log('info', 'message state change', {
    message_uuid: message.message_uuid,
    status: 'suppressed',
    recorded: recorded !== undefined,
    suppressed_recipients: checked.recipients.length,
  });
  if (recorded !== undefined) countMessages('suppressed');
  return { result: 'done', status: 'suppressed' };
}

/** The recipient list fixed at creation (to, cc, bcc in order), rebuilt from the address lists if absent. */
function recipientsOf(message: DeliveryMessage): Recipient[] {
  if (message.recipients.length > 0) return message.recipients;
  const at = message.created_at;
  return (['to', 'cc', 'bcc'] as const).flatMap((kind) =>
    message[kind].map((address) => ({ ...address, kind, status: 'pending' as const, updated_at: at })),
  );
}

/** The message's tracking: its own `tracking` over its sending domain's default (docs/tracking.md). */
async function trackingOf(message: DeliveryMessage, nowMs: number): Promise<TrackingSettings> {
  const domainDefault = (await cachedDomain(message.tenant, nowMs))?.tracking;
  return effectiveTracking({
    tracking: message.tracking,
    tags: message.tags,
    content_kind: message.content_kind,
    ...(domainDefault === undefined ? {} : { domainDefault }),
  });
}

/**
 * Composes and signs the message for this send, at `nowMs`, with the domain's active keys, and
 * returns the record of the composition (`composed`), from which the content route rebuilds the
 * very same bytes. The bodies, keys and tag are read once; each call composes one copy.
 */
async function signedMessageBuilder(
  message: DeliveryMessage,
  transport: MailTransport,
  signingKeys: (domain: string, owner: string) => Promise<SigningKey[]>,
  composer: ReturnType<typeof loadComposer>,
  nowMs: number,
): Promise<(tracking?: Composition['tracking']) => Promise<{ raw: Buffer; composed: ComposedRecord }>> {
  const at = new Date(nowMs);
  const bodies = await readMessageContent(message);
  // Never unsigned, and never with a key of another account: only the keys of a domain that the
  // message's account owns on this very read.
  const keys = await signingKeys(message.tenant, message.account_id);
  if (keys.length === 0) {
    throw new SendRefused(
      `Not sent: the sending domain ${message.tenant} has no active DKIM key of this account (mail is never sent unsigned)`,
    );
  }
  const feedbackTag = await feedbackTagOf(message.account_id);
  const unsubscribeUrl = await broadcastUnsubscribeUrl(message);
  const { composeSignedMessage } = await composer;
  const composed: ComposedRecord = {
    at: at.toISOString(),
    selectors: keys.map((key) => key.selector),
    transport: transport.name,
    ...(unsubscribeUrl === undefined ? {} : { unsubscribe_url: unsubscribeUrl }),
  };
  return async (tracking) => {
    const { raw } = await composeSignedMessage(message, bodies, {
      at,
      keys,
      transport: transport.name,
      feedbackTag,
      ...(unsubscribeUrl === undefined ? {} : { unsubscribeUrl }),
      ...(tracking === undefined ? {} : { tracking }),
    });
    return { raw, composed };
  };
}

/**
 * A broadcast's one-click unsubscribe URL for its one recipient (docs/streams.md); a resend after
 * an expired lease keeps the URL it first recorded, so every copy the recipient got works alike.
 */
async function broadcastUnsubscribeUrl(message: DeliveryMessage): Promise<string | undefined> {
  if (streamOf(message) !== 'broadcast') return undefined;
  if (message.composed?.unsubscribe_url !== undefined) return message.composed.unsubscribe_url;
  const recipient = message.to[0];
  if (recipient === undefined) return undefined;
  // Loaded by broadcasts only: the link key's Secrets Manager client stays out of transactional sends.
  const { unsubscribeUrlFor } = await import('./unsubscribe/link.ts');
  return unsubscribeUrlFor({
    messageUuid: message.message_uuid,
    account: message.account_id,
    email: recipient.email,
  });
}

function isPermanent(error: unknown): boolean {
  if (error instanceof MissingObjectError || error instanceof SigningError || error instanceof SendRefused)
    return true;
  if (error instanceof TransportError) return error.permanent;
  return false;
}

function reasonOf(error: unknown): string {
  if (
    error instanceof MissingObjectError ||
    error instanceof SigningError ||
    error instanceof TransportError ||
    error instanceof SendRefused
  ) {
    return error.message;
  }
  if (typeof (error as { code?: unknown })?.code === 'number') return 'A store was unavailable';
  return 'Unexpected error while sending';
}

async function handleFailure(message: DeliveryMessage, error: unknown, nowMs: number): Promise<SendResult> {
  const reason = reasonOf(error);
  const attempts = message.attempts ?? 1;
  if (isPermanent(error) || attempts >= deliverySettings.maxAttempts) {
    const why = isPermanent(error) ? reason : `${reason} (gave up after ${attempts} attempts)`;
    const failed = await markFailed(message, {
      reason: why,
      nowMs,
      from: ['processing'],
      heldLease: message.lease_until,
    });
    log('warn', 'message state change', {
      message_uuid: message.message_uuid,
      status: failed === undefined ? message.status : 'failed',
      reason: why,
      ...describeError(error),
    });
    if (failed !== undefined) countMessages('failed');
    return { result: 'done', status: 'failed' };
  }
  await releaseClaim(message, {
    nowMs,
    retryDueMs: nowMs + deliverySettings.retryTakeoverMs,
    detail: `attempt ${attempts} failed: ${reason}; will retry`,
  });
  log('warn', 'send attempt failed; will retry', {
    message_uuid: message.message_uuid,
    attempt: attempts,
    reason,
    ...describeError(error),
  });
  return { result: 'retry', reason };
}

/**
 * What the relay said, as statuses: accepted recipients are `delivered` when the relay is the final
 * hop and stay `pending` (message `sent`) otherwise; refused ones are `bounced` (5xx) or `failed` (4xx).
 */
export function outcomeFromRelay(
  message: Pick<DeliveryMessage, 'recipients' | 'to' | 'cc' | 'bcc' | 'created_at' | 'composed'>,
  result: TransportResult,
  at: string,
  /** `messageEntry: false`: no entry for the message's own status (a tracked copy's progress). */
  options: { perCopy?: boolean; messageEntry?: boolean } = {},
): {
  status: ReturnType<typeof messageStatusFromRecipients>;
  recipients: Recipient[];
  history: HistoryEntry[];
} {
  const updates: RecipientUpdate[] = result.recipients.flatMap((entry): RecipientUpdate[] => {
    if (entry.outcome === 'accepted') {
      return result.finalHop ? [{ email: entry.email, status: 'delivered', detail: entry.response }] : [];
    }
    return [
      {
        email: entry.email,
        status: entry.permanent ? 'bounced' : 'failed',
        detail: entry.permanent ? entry.response : `Temporarily refused: ${entry.response ?? ''}`.trim(),
      },
    ];
  });
  const { recipients, applied } = applyRecipientUpdates(
    recipientsOf(message as DeliveryMessage),
    updates,
    at,
  );
  const history: HistoryEntry[] = [];
  if (options.perCopy === true) {
    // Tracked copies are accepted one by one (and over several attempts): a `sent` entry each,
    // unless the copy was written when the relay took it (its entry went with it).
    const written = new Set((message.composed?.copies ?? []).map((copy) => copy.recipient));
    for (const entry of result.recipients) {
      if (entry.outcome !== 'accepted') continue;
      if (written.has(recipientIndexOf(recipients, entry.email))) continue;
      history.push(recipientEntry('sent', at, entry.email, entry.response || 'accepted by the relay'));
    }
  } else if (result.recipients.some((entry) => entry.outcome === 'accepted')) {
    history.push({ status: 'sent', at, detail: result.response || 'accepted by the relay' });
  }
  for (const update of applied) {
    history.push(recipientEntry(update.status, at, update.email, update.detail ?? update.status));
  }
  const status = messageStatusFromRecipients(recipients);
  if (options.messageEntry !== false && status !== 'sent' && needsMessageEntry(status, history))
    history.push({ status, at });
  return { status, recipients, history };
}

async function recordRelayResult(
  message: DeliveryMessage,
  result: TransportResult,
  composed: ComposedRecord,
  nowMs: number,
  suppressionHistory: readonly HistoryEntry[] = [],
  options: { perCopy?: boolean } = {},
): Promise<SendResult> {
  const at = new Date(nowMs).toISOString();
  const relayOutcome = outcomeFromRelay(message, result, at, options);
  const outcome = { ...relayOutcome, history: [...suppressionHistory, ...relayOutcome.history] };
  // Hard bounces (5xx) join the account's suppression list before the outcome is recorded, so a
  // retry of this step (or of the whole send, should the record fail) finds them listed.
  await suppressHardBounces(message, result, nowMs);
  // The mail has left: losing this write would mean a second send after the lease expires, so a
  // store hiccup is retried here a few times before giving up to the queue's redelivery.
  const recorded = await withRetries(() =>
    recordOutcome(message, {
      ...outcome,
      at,
      relay: { message_id: result.messageId, response: result.response },
      composed,
    }),
  );
  log(recorded === undefined ? 'warn' : 'info', 'message state change', {
    message_uuid: message.message_uuid,
    status: outcome.status,
    recorded: recorded !== undefined,
    relay_message_id: result.messageId,
  });
  if (recorded !== undefined) {
    if (result.recipients.some((entry) => entry.outcome === 'accepted')) countMessages('sent');
    if (outcome.status === 'delivered' || outcome.status === 'bounced' || outcome.status === 'failed') {
      countMessages(outcome.status);
    }
  }
  return { result: 'done', status: outcome.status };
}

async function suppressHardBounces(
  message: DeliveryMessage,
  result: TransportResult,
  nowMs: number,
): Promise<void> {
  const hardBounces = hardBouncesOf(message.message_uuid, result.recipients);
  if (hardBounces.length === 0) return;
  await withRetries(
    () => suppressAutomatically(message.account_id, hardBounces, new Date(nowMs)),
    'suppressing hard-bounced recipients',
  ).catch((error: unknown) =>
    log('error', 'suppressing hard-bounced recipients failed', {
      message_uuid: message.message_uuid,
      recipients: hardBounces.length,
      ...describeError(error),
    }),
  );
}

async function withRetries<T>(
  call: () => Promise<T>,
  what = 'recording the relay outcome',
  delaysMs: readonly number[] = [200, 1_000, 3_000],
): Promise<T> {
  for (const delay of delaysMs) {
    try {
      return await call();
    } catch (error) {
      log('warn', `${what} failed; retrying`, describeError(error));
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
  return call();
}
