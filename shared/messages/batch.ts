import { randomUUID } from 'node:crypto';
import { mapLimit } from '../platform/concurrency/map-limit.ts';
import { Code, type ErrorCode } from '../platform/errors/catalogue.ts';
import { type ErrorDetail, isServiceError, ServiceError } from '../platform/errors/service-error.ts';
import { checkInput, withoutIgnoredFields } from '../platform/middleware/validate-input.ts';
import { describeError, log } from '../platform/observability/log.ts';
import { countMessages } from '../platform/observability/metrics.ts';
import {
  MessageTemplates,
  type NewMessage,
  newMessage,
  type PreparedMessage,
  prepareNewMessage,
  SendingDomains,
  storeParts,
} from './add.ts';
import { idempotencyClaim, keyReusedError } from './idempotency.ts';
import { type MessageAddRequest, type MessageBatchEnvelope, messageAddRequest } from './schemas.ts';
import {
  type BatchRecord,
  claimBatchKey,
  finishBatch,
  getBatchRecord,
  readBatchResults,
  releaseBatch,
  takeOverBatch,
} from './store/batch-records.ts';
import { getMessages, type IdempotencyClaim, putMessageIfAbsent, putNewMessages } from './store/messages.ts';
import { enqueueManySends } from './store/send-queue.ts';

/**
 * POST /message/batch-1.0 (docs/messages.md, "Batch sending"): up to 500 new messages in one
 * request, each checked exactly as add checks it (its schema, then `prepareNewMessage`), stored with
 * batched writes (the S3 objects 16 at a time, then content items and search entries, then message
 * items with BatchWriteItem; the queue with SendMessageBatch), answered per message in request order.
 */
export interface BatchOptions {
  account: string;
  /** An API key's domain restriction: the only domains it may send from (else 113). */
  domains?: readonly string[] | undefined;
  dryRun: boolean;
  idempotencyKey: string | undefined;
  /** The parsed JSON body, for the idempotency body hash. */
  body: unknown;
  now?: Date;
}

export type BatchItemResult =
  | { index: number; message_uuid: string | null; status: string }
  | { index: number; error: { code: ErrorCode; message: string; details?: ErrorDetail[] } };

export interface BatchAnswer {
  results: BatchItemResult[];
  accepted: number;
  rejected: number;
  dry_run?: true;
}

/** How long a request holds its batch's record: longer than the function may run (25 s). */
export const batchLeaseMs = 60_000;
/** How long a retry waits for the request that holds the record to finish before answering 111. */
const waitForHolderMs = 15_000;
/** Items checked at the same time (EML parsing and domain look-ups are asynchronous). */
const checkConcurrency = 16;

type Checked = { index: number; prepared: PreparedMessage } | { index: number; error: ServiceError };

/** One item as add would check it: its schema, a creation mode, then every check of add. */
async function checkItem(
  raw: unknown,
  index: number,
  domains: SendingDomains,
  templates: MessageTemplates,
  now: Date,
): Promise<Checked> {
  const item = withoutIgnoredFields(raw);
  const checked = checkInput(messageAddRequest, item);
  if ('error' in checked) return { index, error: checked.error };
  const input: MessageAddRequest = checked.value;
  const mode = input.scheduling?.mode ?? 'immediate';
  if (mode === 'manual-send' || mode === 'manual-cancel') {
    return {
      index,
      error: new ServiceError(Code.InvalidInput, undefined, {
        details: [
          {
            field: 'scheduling.mode',
            message: `A batch creates messages (immediate, scheduled, manual-wait); ${mode} is done with add`,
          },
        ],
      }),
    };
  }
  try {
    return { index, prepared: await prepareNewMessage(input, domains, now, templates) };
  } catch (error) {
    // A refusal of this message; anything else (the database went away) fails the whole batch.
    if (isServiceError(error) && error.status < 500) return { index, error };
    throw error;
  }
}

const itemField = (index: number, field: string) =>
  field === '(body)' ? `messages[${index}]` : `messages[${index}].${field}`;

function errorResult(index: number, error: ServiceError): BatchItemResult {
  return {
    index,
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  };
}

/**
 * A strict batch's one error: the code the first bad message would get on add, with the details of
 * every bad message, each naming its message (`messages[3].to[0]`).
 */
function strictError(
  bad: ReadonlyArray<{ index: number; error: ServiceError }>,
  total: number,
): ServiceError {
  const details = bad.flatMap(({ index, error }) =>
    error.details === undefined || error.details.length === 0
      ? [{ field: `messages[${index}]`, message: error.message }]
      : error.details.map((detail) => ({ field: itemField(index, detail.field), message: detail.message })),
  );
  const first = bad[0] as { error: ServiceError };
  return new ServiceError(
    first.error.code,
    `${bad.length} of ${total} messages ${bad.length === 1 ? 'is' : 'are'} invalid; nothing was stored`,
    { details },
  );
}

function answer(results: BatchItemResult[], dryRun: boolean): BatchAnswer {
  const accepted = results.filter((result) => 'status' in result).length;
  return {
    results,
    accepted,
    rejected: results.length - accepted,
    ...(dryRun ? { dry_run: true as const } : {}),
  };
}

/** POST /message/batch-1.0. */
export async function sendBatch(input: MessageBatchEnvelope, options: BatchOptions): Promise<BatchAnswer> {
  const now = options.now ?? new Date();
  const claim = idempotencyClaim(options.idempotencyKey, options.body, now);
  if (claim !== undefined) {
    const record = await getBatchRecord(options.account, claim.key, now);
    if (record !== undefined) return answerFromRecord(record, claim, input, options);
  }
  const checked = await checkAll(input, options.account, now, options.domains);
  const bad = checked.filter((entry): entry is Extract<Checked, { error: ServiceError }> => 'error' in entry);
  if ((input.validation ?? 'strict') === 'strict' && bad.length > 0)
    throw strictError(bad, input.messages.length);

  if (options.dryRun) {
    return answer(
      checked.map((entry) =>
        'error' in entry
          ? errorResult(entry.index, entry.error)
          : { index: entry.index, message_uuid: null, status: entry.prepared.status },
      ),
      true,
    );
  }

  const messages = new Map<number, NewMessage>();
  for (const entry of checked)
    if ('prepared' in entry)
      messages.set(entry.index, newMessage(entry.prepared, randomUUID(), options.account, now));
  const results = checked.map((entry): BatchItemResult => {
    const message = messages.get(entry.index);
    return message === undefined
      ? errorResult(entry.index, (entry as { error: ServiceError }).error)
      : { index: entry.index, message_uuid: message.item.message_uuid, status: message.item.status };
  });

  const holder = randomUUID();
  if (claim !== undefined) {
    const claimed = await claimBatchKey(
      options.account,
      {
        key: claim.key,
        bodyHash: claim.bodyHash,
        createdAt: now.toISOString(),
        holder,
        leaseUntil: now.getTime() + batchLeaseMs,
        expiresAt: claim.expiresAt,
        now,
      },
      results,
    );
    // Another request with the same key got there first: answer as it does.
    if (!claimed.claimed) {
      if (claimed.record === undefined) throw keyReusedError();
      return answerFromRecord(claimed.record, claim, input, options);
    }
  }
  try {
    await storeBatch([...messages.values()], options.account, results);
  } catch (error) {
    // The retry (same key) completes the batch with the same uuids; without a key, say per
    // message what was stored.
    if (claim !== undefined) {
      await releaseBatch(options.account, claim.key, holder).catch(() => undefined);
      throw error;
    }
    throw await partialFailure(error, results);
  }
  if (claim !== undefined) await finishBatch(options.account, claim.key, holder);
  return answer(results, false);
}

/**
 * Every item, checked at most `checkConcurrency` at a time; the domain look-ups and the template
 * records are shared, and each item's template is rendered as add renders it.
 */
function checkAll(
  input: MessageBatchEnvelope,
  account: string,
  now: Date,
  restriction: readonly string[] | undefined,
): Promise<Checked[]> {
  const domains = new SendingDomains(account, restriction);
  const templates = new MessageTemplates(account, { batch: true });
  return mapLimit(input.messages, checkConcurrency, (item, index) =>
    checkItem(item, index, domains, templates, now),
  );
}

/** Stores a batch's messages (parts first, then the items) and queues the immediate ones. */
async function storeBatch(
  messages: readonly NewMessage[],
  account: string,
  results: readonly BatchItemResult[],
): Promise<void> {
  await storeParts(messages, true);
  await putNewMessages(messages.map(({ item, dueAt }) => ({ item, dueAt })));
  acceptedLog(account, results);
  await enqueue(account, messages);
}

async function enqueue(account: string, messages: readonly NewMessage[]): Promise<void> {
  const queued = messages.filter((message) => message.item.status === 'queued');
  if (queued.length === 0) return;
  const failed = await enqueueManySends(
    queued.map((message) => message.item.message_uuid),
    account,
  );
  if (failed.length > 0)
    log('warn', 'enqueue failed; the dispatcher will re-enqueue from the due index', {
      message_uuids: failed,
    });
}

/** One log line for the batch's accepted messages (their uuids by status), and the metric. */
function acceptedLog(account: string, results: readonly BatchItemResult[]): void {
  const byStatus: Record<string, string[]> = {};
  for (const result of results) {
    if (!('status' in result) || result.message_uuid === null) continue;
    const list = byStatus[result.status] ?? [];
    list.push(result.message_uuid);
    byStatus[result.status] = list;
  }
  const accepted = Object.values(byStatus).reduce((sum, list) => sum + list.length, 0);
  log('info', 'message state', { account, event: 'batch', accepted, message_uuids: byStatus });
  countMessages('accepted', accepted);
}

/**
 * A batch without an Idempotency-Key whose writes failed half way: the failure's code, and per
 * message what happened, read back from the table (stored, with its uuid, or not stored).
 */
async function partialFailure(error: unknown, results: readonly BatchItemResult[]): Promise<unknown> {
  const uuids = results.flatMap((result) =>
    'status' in result && result.message_uuid !== null ? [result.message_uuid] : [],
  );
  let stored: Map<string, unknown>;
  try {
    stored = await getMessages(uuids);
  } catch {
    return error;
  }
  const code = isServiceError(error) ? error.code : Code.DatabaseUnavailable;
  log('error', 'batch stored in part', { stored: stored.size, of: uuids.length, ...describeError(error) });
  return new ServiceError(
    code,
    `${stored.size} of ${uuids.length} messages were stored before the failure (see details); send the others again`,
    {
      cause: error,
      details: results.flatMap((result) =>
        'status' in result && result.message_uuid !== null
          ? [
              {
                field: `messages[${result.index}]`,
                message: stored.has(result.message_uuid)
                  ? `stored as ${result.message_uuid} (${result.status})`
                  : 'not stored: send again',
              },
            ]
          : [],
      ),
    },
  );
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A key that already has a record: the same body gets the recorded results (same uuids); another
 * body is 111. A record still pending belongs to a request that is storing the batch (wait for it)
 * or that died (take it over once its lease has run out, and complete the batch).
 */
async function answerFromRecord(
  first: BatchRecord,
  claim: IdempotencyClaim,
  input: MessageBatchEnvelope,
  options: BatchOptions,
): Promise<BatchAnswer> {
  let record: BatchRecord | undefined = first;
  const waitUntil = Date.now() + waitForHolderMs;
  for (;;) {
    if (record === undefined) throw keyReusedError();
    if (record.kind !== 'batch' || record.bodyHash !== claim.bodyHash) throw keyReusedError();
    const results = () => readBatchResults(options.account, claim.key, record as BatchRecord);
    if (record.state === 'done' || options.dryRun)
      return answer((await results()) as BatchItemResult[], options.dryRun);
    const nowMs = Date.now();
    if (record.leaseUntil < nowMs) {
      const holder = randomUUID();
      if (await takeOverBatch(options.account, claim.key, record, holder, nowMs + batchLeaseMs, nowMs)) {
        const recorded = (await results()) as BatchItemResult[];
        await completeBatch(record, holder, claim, input, options.account, recorded);
        return answer(recorded, false);
      }
    } else if (nowMs > waitUntil) {
      throw new ServiceError(
        Code.MethodValidation,
        'A batch with this Idempotency-Key is still being stored',
        {
          details: [
            { field: 'Idempotency-Key', message: 'In progress: send the same request again in a minute' },
          ],
        },
      );
    }
    await pause(250);
    record = await getBatchRecord(options.account, claim.key, new Date());
  }
}

/**
 * Completes a batch that another request recorded and did not finish: its messages are laid out
 * again from the same body, time and uuids (so they are the same items), and each that does not
 * exist yet is written with a condition (one that exists may have moved on since: it is left as
 * it is). Only this rare path writes message by message.
 */
async function completeBatch(
  record: BatchRecord,
  holder: string,
  claim: IdempotencyClaim,
  input: MessageBatchEnvelope,
  account: string,
  results: readonly BatchItemResult[],
): Promise<void> {
  const createdAt = new Date(record.createdAt);
  const domains = new SendingDomains(account);
  const templates = new MessageTemplates(account, { batch: true });
  const accepted = results.filter(
    (result): result is Extract<BatchItemResult, { status: string }> =>
      'status' in result && result.message_uuid !== null,
  );
  const messages = await mapLimit(accepted, checkConcurrency, async (result) => {
    const checked = await checkItem(
      input.messages[result.index],
      result.index,
      domains,
      templates,
      createdAt,
    );
    if ('error' in checked) {
      throw new ServiceError(
        Code.MethodValidation,
        `This batch cannot be completed: messages[${result.index}] no longer passes its checks (${checked.error.message})`,
      );
    }
    return newMessage(checked.prepared, result.message_uuid as string, account, createdAt);
  });
  const existing = await getMessages(messages.map((message) => message.item.message_uuid));
  const missing = messages.filter((message) => !existing.has(message.item.message_uuid));
  await storeParts(missing, true);
  const written = await mapLimit(missing, checkConcurrency, async (message) =>
    (await putMessageIfAbsent(message.item, message.dueAt)) ? message : undefined,
  );
  await enqueue(
    account,
    written.filter((message): message is NewMessage => message !== undefined),
  );
  log('info', 'batch completed by a retry', { account, messages: messages.length, written: missing.length });
  await finishBatch(account, claim.key, holder);
}
