import { SQSClient } from '@aws-sdk/client-sqs';
import { invocationTotals } from '../infra/local/invocations.ts';

/**
 * Counts every AWS SDK request the service makes in this process (the local host runs the real
 * handlers and the event-source loop in-process), by wrapping `send` on the SDK's one client base
 * class: DynamoDB (with `ReturnConsumedCapacity: INDEXES` added, so DynamoDB Local reports the
 * write and read units per table and index), SQS and S3. The benchmark's own clients are excluded.
 */
export interface Units {
  write: number;
  read: number;
}

export interface Meter {
  /** `table` or the index name → units consumed. */
  capacity: Map<string, Units>;
  /** Table write units by operation (`Put`, `Update` …), and how many such requests. */
  tableWritesByOperation: Map<string, { units: number; requests: number }>;
  /**
   * Table write units of single-item writes (Put, Update, Delete) by the kind of item, from its key:
   * `MESSAGE`, `CONTENT`, `TERM` (search entries), `IDEMPOTENCY` … (batched writes are not split).
   */
  tableWritesByItem: Map<string, number>;
  /** `<service> <Command>` → requests. */
  requests: Map<string, number>;
  /** ReceiveMessage answers that carried messages: one Lambda invocation each (event source mapping). */
  receivesWithMessages: number;
  emptyReceives: number;
  /**
   * Invocations of the host's event sources (queues and the table stream), by function: how many, and
   * their summed duration as Lambda bills it (infra/local/invocations.ts).
   */
  invocations: Map<string, { count: number; ms: number }>;
}

const clientBase = Object.getPrototypeOf(SQSClient.prototype) as {
  send: (this: unknown, command: unknown, ...rest: unknown[]) => Promise<unknown>;
};
const originalSend = clientBase.send;
const excluded = new WeakSet<object>();
let active: Meter | undefined;

const readCommands = new Set(['Get', 'Query', 'Scan', 'BatchGet', 'TransactGet']);
const capacityCommands = new Set([
  'Get',
  'Put',
  'Update',
  'Delete',
  'Query',
  'Scan',
  'BatchGet',
  'BatchWrite',
  'TransactWrite',
  'TransactGet',
]);

/** `PutCommand` / `PutItemCommand` → `Put`. */
const operationOf = (name: string) => name.replace(/Command$/, '').replace(/Item$/, '');

function add(meter: Meter, key: string, units: Partial<Units>): void {
  const current = meter.capacity.get(key) ?? { write: 0, read: 0 };
  current.write += units.write ?? 0;
  current.read += units.read ?? 0;
  meter.capacity.set(key, current);
}

interface Consumed {
  CapacityUnits?: number;
  Table?: { CapacityUnits?: number };
  GlobalSecondaryIndexes?: Record<string, { CapacityUnits?: number }>;
}

/**
 * The kind of item a single-item write touches: the sort key of a message's item (`MESSAGE`), the
 * content item (it holds the bodies, `z`, at its first search entry's key: `CONTENT`), else the key's
 * prefix (`TERM`, `IDEMPOTENCY` …).
 */
function itemKind(input: Record<string, unknown> | undefined): string | undefined {
  const key = (input?.Item ?? input?.Key) as { pk?: unknown; sk?: unknown; z?: unknown } | undefined;
  if (typeof key?.pk !== 'string') return undefined;
  if (key.z !== undefined) return 'CONTENT';
  const prefix = key.pk.split('#')[0] as string;
  return prefix === 'MESSAGE' ? String(key.sk) : prefix;
}

/**
 * The statistics' counter rows (`STATS#…`, docs/stats.md) are table items; their writes are shown
 * apart, as `counters`, so that section 7 shows what the counters add per message.
 */
const isCounterWrite = (input: Record<string, unknown> | undefined): boolean =>
  String((input?.Key as { pk?: unknown } | undefined)?.pk ?? '').startsWith('STATS#');

function recordCapacity(
  meter: Meter,
  operation: string,
  consumed: Consumed | Consumed[] | undefined,
  tableName = 'table',
  kind?: string,
): void {
  const isRead = readCommands.has(operation);
  for (const entry of Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) {
    const indexUnits = Object.values(entry.GlobalSecondaryIndexes ?? {}).reduce(
      (sum, index) => sum + (index.CapacityUnits ?? 0),
      0,
    );
    const tableUnits = entry.Table?.CapacityUnits ?? (entry.CapacityUnits ?? 0) - indexUnits;
    add(meter, tableName, isRead ? { read: tableUnits } : { write: tableUnits });
    if (!isRead && tableName === 'table') {
      const current = meter.tableWritesByOperation.get(operation) ?? { units: 0, requests: 0 };
      current.units += tableUnits;
      current.requests += 1;
      meter.tableWritesByOperation.set(operation, current);
      if (kind !== undefined)
        meter.tableWritesByItem.set(kind, (meter.tableWritesByItem.get(kind) ?? 0) + tableUnits);
    }
    for (const [name, index] of Object.entries(entry.GlobalSecondaryIndexes ?? {}))
      add(meter, name, isRead ? { read: index.CapacityUnits ?? 0 } : { write: index.CapacityUnits ?? 0 });
  }
}

clientBase.send = async function metered(this: unknown, command: unknown, ...rest: unknown[]) {
  const meter = active;
  if (meter === undefined || excluded.has(this as object)) return originalSend.call(this, command, ...rest);
  const service = String(
    (this as { config?: { serviceId?: string } }).config?.serviceId ?? 'unknown',
  ).replace('DynamoDB Streams', 'DynamoDBStreams');
  const name = (command as { constructor: { name: string } }).constructor.name;
  const operation = operationOf(name);
  const input = (command as { input?: Record<string, unknown> }).input;
  if (service === 'DynamoDB' && capacityCommands.has(operation) && input !== undefined)
    input.ReturnConsumedCapacity = 'INDEXES';
  const key = `${service} ${name.replace(/Command$/, '')}`;
  meter.requests.set(key, (meter.requests.get(key) ?? 0) + 1);
  const result = (await originalSend.call(this, command, ...rest)) as Record<string, unknown>;
  if (service === 'DynamoDB')
    recordCapacity(
      meter,
      operation,
      result?.ConsumedCapacity as Consumed | Consumed[] | undefined,
      isCounterWrite(input) ? 'counters' : 'table',
      itemKind(input),
    );
  if (service === 'SQS' && operation === 'ReceiveMessage') {
    const messages = (result?.Messages ?? []) as Array<{ ReceiptHandle?: string }>;
    if (messages.length > 0) {
      meter.receivesWithMessages += 1;
    } else meter.emptyReceives += 1;
  }
  return result;
};

/** The benchmark's own clients (status polling, seeding) are not the service's requests. */
export function excludeClient(client: object): void {
  excluded.add(client);
}

let totalsAtStart = new Map<string, { count: number; ms: number }>();

export function startMeter(): Meter {
  totalsAtStart = new Map([...invocationTotals].map(([id, total]) => [id, { ...total }]));
  active = {
    capacity: new Map(),
    tableWritesByOperation: new Map(),
    tableWritesByItem: new Map(),
    requests: new Map(),
    receivesWithMessages: 0,
    emptyReceives: 0,
    invocations: new Map(),
  };
  return active;
}

export function stopMeter(): void {
  if (active !== undefined) {
    for (const [id, total] of invocationTotals) {
      const before = totalsAtStart.get(id) ?? { count: 0, ms: 0 };
      if (total.count > before.count)
        active.invocations.set(id, { count: total.count - before.count, ms: total.ms - before.ms });
    }
  }
  active = undefined;
}

/** Requests of one service (e.g. `SQS`), by command, and in all. */
export function requestsOf(
  meter: Meter,
  service: string,
): { total: number; byCommand: Record<string, number> } {
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [key, count] of meter.requests) {
    const [name, command] = key.split(' ') as [string, string];
    if (name !== service) continue;
    byCommand[command] = count;
    total += count;
  }
  return { total, byCommand };
}
