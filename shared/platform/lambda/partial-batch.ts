import { describeError, type LogFields, log } from '../observability/log.ts';

/**
 * The workers' one partial-batch runner, for event source mappings with ReportBatchItemFailures
 * (the queues' and the table stream's). A handler in functions/ reads the Lambda event and hands
 * its records here with the id Lambda knows each by (an SQS message id, a stream record's sequence
 * number) and the work of one record, or of the whole batch; what comes back is the handler's
 * answer. Nothing here knows an event's shape, and the services it runs take domain inputs.
 */

/** Lambda's answer to a batch: the records to hand over again (SQS and DynamoDB streams alike). */
export interface PartialBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** The line a failed record writes: `fields` of the record, then the error's class and message. */
export interface FailureLog<R> {
  level: 'warn' | 'error';
  message: string;
  fields: (record: R) => LogFields;
}

export interface PartialBatchOptions<R> {
  /** The record's `itemIdentifier`. */
  idOf: (record: R) => string;
  /**
   * How the records run: `'parallel'` (all at once, the default), `'in-order'` (one after another,
   * in batch order), or by lane: records with the same key run one after another in batch order,
   * the lanes side by side. A record that fails does not stop its lane.
   */
  order?: 'parallel' | 'in-order' | ((record: R) => string);
  /**
   * Which failures are answered: `'every'` (a queue: each failed record comes back on its own, in
   * the order they failed; the default), or `'first'` (a stream: it resumes from the first failed
   * record in batch order and hands over everything after it again, so only that one is answered
   * and logged; every record still runs).
   */
  report?: 'every' | 'first';
  /** Written for each thrown failure that is answered. */
  failureLog: FailureLog<R>;
}

/**
 * Runs each record of a batch and answers which ones to hand over again: those whose work threw
 * (logged) or answered `'retry'` (nothing logged).
 */
export async function processPartialBatch<R>(
  records: readonly R[],
  handle: (record: R) => Promise<void> | Promise<'retry' | undefined>,
  options: PartialBatchOptions<R>,
): Promise<PartialBatchResponse> {
  const { idOf, failureLog } = options;
  const report = options.report ?? 'every';
  const batchItemFailures: PartialBatchResponse['batchItemFailures'] = [];
  /** With `report: 'first'`: the first failed record so far in batch order, and its error if it threw. */
  let firstFailure: { index: number; thrown: { error: unknown } | undefined } | undefined;

  const fail = (index: number, thrown: { error: unknown } | undefined) => {
    const record = records[index] as R;
    if (report === 'first') {
      if (firstFailure === undefined || index < firstFailure.index) firstFailure = { index, thrown };
      return;
    }
    if (thrown !== undefined) writeFailure(failureLog, record, thrown.error);
    batchItemFailures.push({ itemIdentifier: idOf(record) });
  };
  const run = async (index: number) => {
    try {
      if ((await handle(records[index] as R)) === 'retry') fail(index, undefined);
    } catch (error) {
      fail(index, { error });
    }
  };

  const order = options.order ?? 'parallel';
  if (order === 'parallel') {
    await Promise.all(records.map((_, index) => run(index)));
  } else {
    const laneOf = order === 'in-order' ? () => '' : order;
    const lanes = new Map<string, number[]>();
    records.forEach((record, index) => {
      const key = laneOf(record);
      lanes.set(key, [...(lanes.get(key) ?? []), index]);
    });
    await Promise.all(
      [...lanes.values()].map(async (lane) => {
        for (const index of lane) await run(index);
      }),
    );
  }

  if (firstFailure !== undefined) {
    const record = records[firstFailure.index] as R;
    if (firstFailure.thrown !== undefined) writeFailure(failureLog, record, firstFailure.thrown.error);
    batchItemFailures.push({ itemIdentifier: idOf(record) });
  }
  return { batchItemFailures };
}

/**
 * Runs a batch as one piece of work (a batch that is counted as a whole): if it throws, the batch
 * is answered from its first record on (a stream hands all of it over again), and the failure is
 * logged with the first record's fields. An empty batch does nothing.
 */
export async function processWholeBatch<R>(
  records: readonly R[],
  handle: (records: readonly R[]) => Promise<void>,
  options: Pick<PartialBatchOptions<R>, 'idOf' | 'failureLog'>,
): Promise<PartialBatchResponse> {
  if (records.length === 0) return { batchItemFailures: [] };
  const first = records[0] as R;
  try {
    await handle(records);
    return { batchItemFailures: [] };
  } catch (error) {
    writeFailure(options.failureLog, first, error);
    return { batchItemFailures: [{ itemIdentifier: options.idOf(first) }] };
  }
}

function writeFailure<R>(failureLog: FailureLog<R>, record: R, error: unknown): void {
  log(failureLog.level, failureLog.message, { ...failureLog.fields(record), ...describeError(error) });
}
