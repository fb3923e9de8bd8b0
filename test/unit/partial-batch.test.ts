import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'vitest';
import { processPartialBatch, processWholeBatch } from '../../shared/platform/lambda/partial-batch.ts';
import { onLogLine } from '../../shared/platform/observability/log.ts';

/** The partial-batch runner of the queue and stream workers, on plain records: no server, no queue. */
interface Item {
  id: string;
  lane?: string;
  /** What the work does: finish, throw, or answer 'retry'; after `delayMs`. */
  outcome?: 'ok' | 'throw' | 'retry';
  delayMs?: number;
}

const item = (id: string, extra: Omit<Item, 'id'> = {}): Item => ({ id, ...extra });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const failureLog = {
  level: 'warn' as const,
  message: 'item failed',
  fields: (record: Item) => ({ item_id: record.id }),
};

let lines: Array<Record<string, unknown>> = [];
let stopListening: () => void = () => {};
const previousLogFile = process.env.LOG_FILE;
beforeEach(() => {
  lines = [];
  // Keep the lines off the test output; the listener still gets every one.
  process.env.LOG_FILE = '/dev/null';
  stopListening = onLogLine((line) => {
    lines.push(JSON.parse(line) as Record<string, unknown>);
  });
});
afterEach(() => {
  stopListening();
  if (previousLogFile === undefined) delete process.env.LOG_FILE;
  else process.env.LOG_FILE = previousLogFile;
});

/** Runs the work of `items`, recording when each starts and ends and how many run at once. */
function recorder() {
  const events: string[] = [];
  let running = 0;
  let mostAtOnce = 0;
  const work = async (record: Item): Promise<'retry' | undefined> => {
    running += 1;
    mostAtOnce = Math.max(mostAtOnce, running);
    events.push(`start ${record.id}`);
    try {
      await sleep(record.delayMs ?? 5);
      if (record.outcome === 'throw') throw new TypeError(`boom ${record.id}`);
      return record.outcome === 'retry' ? 'retry' : undefined;
    } finally {
      running -= 1;
      events.push(`end ${record.id}`);
    }
  };
  return { work, events, mostAtOnce: () => mostAtOnce };
}

/** A failure line's own fields (without the timestamp and service). */
const failureLine = ({ level, message, item_id, errorName, errorMessage }: Record<string, unknown>) => ({
  level,
  message,
  item_id,
  errorName,
  errorMessage,
});

const ids = (response: { batchItemFailures: Array<{ itemIdentifier: string }> }) =>
  response.batchItemFailures.map((failure) => failure.itemIdentifier);

describe('processPartialBatch', () => {
  it('runs every record at once by default and answers each failure as it happens; only a throw is logged', async () => {
    const { work, mostAtOnce } = recorder();
    const records = [
      item('a', { outcome: 'throw', delayMs: 30 }),
      item('b'),
      item('c', { outcome: 'retry', delayMs: 1 }),
      item('d', { outcome: 'throw', delayMs: 10 }),
    ];
    const response = await processPartialBatch(records, work, { idOf: (r) => r.id, failureLog });
    assert.equal(mostAtOnce(), 4);
    assert.deepEqual(ids(response), ['c', 'd', 'a']);
    assert.deepEqual(lines.map(failureLine), [
      { level: 'WARN', message: 'item failed', item_id: 'd', errorName: 'TypeError', errorMessage: 'boom d' },
      { level: 'WARN', message: 'item failed', item_id: 'a', errorName: 'TypeError', errorMessage: 'boom a' },
    ]);
  });

  it('answers nothing for a batch that succeeds, or an empty one', async () => {
    const { work } = recorder();
    assert.deepEqual(
      await processPartialBatch([item('a'), item('b')], work, { idOf: (r) => r.id, failureLog }),
      {
        batchItemFailures: [],
      },
    );
    assert.deepEqual(await processPartialBatch([], work, { idOf: (r: Item) => r.id, failureLog }), {
      batchItemFailures: [],
    });
    assert.deepEqual(lines, []);
  });

  it("'in-order' runs one record after another in batch order; a failure does not stop the rest", async () => {
    const { work, events, mostAtOnce } = recorder();
    const records = [item('a', { delayMs: 20 }), item('b', { outcome: 'throw' }), item('c', { delayMs: 1 })];
    const response = await processPartialBatch(records, work, {
      idOf: (r) => r.id,
      order: 'in-order',
      failureLog,
    });
    assert.equal(mostAtOnce(), 1);
    assert.deepEqual(events, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.deepEqual(ids(response), ['b']);
    assert.equal(lines.length, 1);
  });

  it('lanes: one record of a lane at a time, in batch order; the lanes side by side', async () => {
    const { work, events, mostAtOnce } = recorder();
    const records = [
      item('x1', { lane: 'x', delayMs: 20 }),
      item('y1', { lane: 'y', delayMs: 5, outcome: 'throw' }),
      item('x2', { lane: 'x', delayMs: 1 }),
      item('y2', { lane: 'y', delayMs: 1 }),
      item('z1', { lane: 'z', delayMs: 1 }),
    ];
    const response = await processPartialBatch(records, work, {
      idOf: (r) => r.id,
      order: (r) => r.lane as string,
      failureLog,
    });
    assert.equal(mostAtOnce(), 3);
    const at = (event: string) => events.indexOf(event);
    assert.ok(at('end x1') < at('start x2'), 'x2 waits for x1');
    assert.ok(at('end y1') < at('start y2'), 'y2 waits for y1, which failed');
    assert.ok(at('start z1') < at('end x1'), 'the lanes run side by side');
    assert.deepEqual(ids(response), ['y1']);
  });

  it("report 'first': every record runs, only the first failure in batch order is answered and logged", async () => {
    const { work, events } = recorder();
    const records = [
      item('1', { delayMs: 1 }),
      item('2', { outcome: 'throw', delayMs: 30 }),
      item('3', { outcome: 'throw', delayMs: 1 }),
      item('4', { outcome: 'retry', delayMs: 1 }),
    ];
    const response = await processPartialBatch(records, work, {
      idOf: (r) => r.id,
      report: 'first',
      failureLog,
    });
    assert.equal(events.filter((event) => event.startsWith('end')).length, 4);
    assert.deepEqual(ids(response), ['2']);
    assert.deepEqual(
      lines.map((line) => [line.item_id, line.errorMessage]),
      [['2', 'boom 2']],
    );
  });

  it("report 'first': a first failure that answered 'retry' is answered without a line", async () => {
    const { work } = recorder();
    const records = [item('1', { outcome: 'retry', delayMs: 20 }), item('2', { outcome: 'throw' })];
    const response = await processPartialBatch(records, work, {
      idOf: (r) => r.id,
      report: 'first',
      failureLog,
    });
    assert.deepEqual(ids(response), ['1']);
    assert.deepEqual(lines, []);
  });

  it('a record whose work throws before its first await still fails alone', async () => {
    const records = [item('a'), item('b')];
    const response = await processPartialBatch(
      records,
      (record) => {
        if (record.id === 'a') throw new Error('at once');
        return Promise.resolve();
      },
      { idOf: (r) => r.id, failureLog },
    );
    assert.deepEqual(ids(response), ['a']);
    assert.equal(lines[0]?.errorMessage, 'at once');
  });
});

describe('processWholeBatch', () => {
  it('does nothing for an empty batch', async () => {
    let called = false;
    const response = await processWholeBatch(
      [] as Item[],
      async () => {
        called = true;
      },
      { idOf: (r) => r.id, failureLog },
    );
    assert.deepEqual(response, { batchItemFailures: [] });
    assert.equal(called, false);
  });

  it('hands the whole batch to the work once and answers nothing when it succeeds', async () => {
    const seen: string[][] = [];
    const response = await processWholeBatch(
      [item('a'), item('b')],
      async (records) => {
        seen.push(records.map((r) => r.id));
      },
      { idOf: (r) => r.id, failureLog },
    );
    assert.deepEqual(seen, [['a', 'b']]);
    assert.deepEqual(response, { batchItemFailures: [] });
    assert.deepEqual(lines, []);
  });

  it('a failure answers the batch from its first record, logged with its fields', async () => {
    const response = await processWholeBatch(
      [item('a'), item('b')],
      async () => {
        throw new RangeError('store down');
      },
      { idOf: (r) => r.id, failureLog: { ...failureLog, level: 'error' } },
    );
    assert.deepEqual(ids(response), ['a']);
    assert.deepEqual(lines.map(failureLine), [
      {
        level: 'ERROR',
        message: 'item failed',
        item_id: 'a',
        errorName: 'RangeError',
        errorMessage: 'store down',
      },
    ]);
  });
});
