import { readFileSync, statSync } from 'node:fs';
import { shardCount, statsWriters } from '../shared/platform/table/keys.ts';
import { type Meter, requestsOf, startMeter, stopMeter } from './meter.ts';
import { type Caller, call, countedFor, statusesOf } from './service.ts';
import { figure, fmt, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * Scale and cost (docs/benchmarks.md, section 7): the full lifecycle of real messages (add →
 * delivered) through the local host, with every AWS request the service makes counted and
 * DynamoDB's consumed capacity per table and index (`ReturnConsumedCapacity: INDEXES`); from
 * those, the partition ceilings and the AWS cost per million messages.
 */

/**
 * Public on-demand prices, us-east-1, as listed on the AWS pricing pages for each service
 * (DynamoDB, S3, SQS, API Gateway, Lambda, CloudWatch, SES) in 2025 (price list dated 2025-06-01);
 * not re-read on the day the benchmark runs. Free tiers are left out.
 */
export const prices = {
  dated: '2025-06-01',
  region: 'us-east-1',
  /** DynamoDB on-demand, per million write / read request units (since the 2024-11-01 cut). */
  dynamoWriteUnit: 0.625,
  dynamoReadUnit: 0.125,
  /** S3 Standard, per million PUT/COPY/POST/LIST and GET requests. */
  s3Put: 5.0,
  s3Get: 0.4,
  /** SQS standard queue, per million requests (each 64 KB chunk of a payload is one request). */
  sqsRequest: 0.4,
  /** API Gateway, per million requests: REST API (first 333 M) and HTTP API (first 300 M). */
  apiRest: 3.5,
  apiHttp: 1.0,
  /** Lambda arm64: per million requests, and per GB-second. */
  lambdaRequest: 0.2,
  lambdaGbSecond: 0.0000133334,
  /** CloudWatch Logs standard ingestion, per GB. */
  logsIngestGb: 0.5,
  /** SES outbound, per message (the yardstick: $0.10 per 1,000). */
  sesMessage: 0.0001,
} as const;

/**
 * Lambda memory as the stack sets it (infra/stack/service-stack.ts): API functions, the dispatcher
 * and the table stream's consumers 512 MB, the sender 1,024 MB.
 */
const memoryGb = { api: 0.5, sender: 1.0, dispatcher: 0.5 };
const memoryOf = (functionId: string): number => (functionId === 'sender' ? memoryGb.sender : memoryGb.api);
const partitionWriteLimit = 1000;

export interface Profile {
  name: string;
  text: string;
  html: string;
  recipients: string[];
  tags?: Array<{ name: string; value: string }>;
  metadata?: Record<string, string>;
  /** `batch`: sent with POST /message/batch-1.0, 500 messages a request (else one add each). */
  via?: 'add' | 'batch';
}

/**
 * Bodies written like real transactional mail: no paragraph repeats (a repeated one would compress
 * far better than real mail does, and bodies are stored compressed). The large profile is an order
 * confirmation template with inline styles and 80 distinct order lines.
 */
const products = [
  'Linen shirt',
  'Wool socks (3 pairs)',
  'Ceramic mug',
  'Desk lamp',
  'Notebook, dotted A5',
  'Rain jacket',
  'Canvas tote',
  'Espresso beans 1 kg',
  'Phone case',
  'Running cap',
  'Yoga mat',
  'Glass bottle',
];
const orderLine = (n: number) =>
  `<tr><td style="padding:6px 8px;border-bottom:1px solid #eee">${products[n % products.length]} — size ${['S', 'M', 'L', 'XL'][n % 4]}, colour ${['sand', 'navy', 'olive', 'rust', 'slate'][n % 5]}, SKU ${String(48_213 + n * 37)}</td><td style="padding:6px 8px;border-bottom:1px solid #eee;text-align:right">${1 + (n % 3)}</td><td style="padding:6px 8px;border-bottom:1px solid #eee;text-align:right">${(((n * 7.3) % 90) + 4.9).toFixed(2)} EUR</td></tr>`;
const typicalText =
  'Hello Ada,\n\nThank you for your order 12345 of 22 November. Your parcel left our warehouse in Leipzig this morning and should reach you within three working days; track it at https://shop.example/track/12345.\n\n2 items — 59.90 EUR, paid by card ending 4242.\n\nThe Shop team\n';
const typicalHtml =
  '<!doctype html><html><body style="font-family:sans-serif"><p>Hello <b>Ada</b>,</p><p>Thank you for your order <b>12345</b> of 22 November. Your parcel left our warehouse in Leipzig this morning and should reach you within three working days.</p><p><a href="https://shop.example/track/12345">Track your parcel</a></p><table><tr><td>Items</td><td>2</td></tr><tr><td>Total</td><td>59.90 EUR (card ending 4242)</td></tr></table><p>Questions? Reply to this message or call +49 30 1234567 (Monday to Friday, 9:00–18:00).</p><p>The Shop team</p><p style="color:#888;font-size:12px">Shop GmbH, Torstraße 1, 10119 Berlin · Registered at Amtsgericht Charlottenburg, HRB 123456 · VAT DE123456789. You receive this message because you placed an order at shop.example.</p></body></html>';

export const profiles: Profile[] = [
  {
    name: 'typical: 2 recipients, text + HTML (about 1 KB of bodies)',
    text: typicalText,
    html: typicalHtml,
    recipients: ['Ada <ada@recipient.test>', 'bob@recipient.test'],
  },
  {
    name: 'large HTML: 2 recipients, text + 24 KB HTML (80 order lines)',
    text: 'Hello Ada,\n\nThank you for your order 12345: 80 items, listed in the HTML version of this message.\n\nThe Shop team\n',
    html: `<!doctype html><html><head><meta charset="utf-8"><title>Order 12345</title></head><body style="margin:0;background:#f6f6f6"><table role="presentation" width="100%" style="max-width:640px;margin:0 auto;background:#fff;font-family:Helvetica,Arial,sans-serif;font-size:14px;color:#222"><tr><td style="padding:24px"><h1 style="font-size:20px">Your order 12345</h1><table width="100%" style="border-collapse:collapse">${Array.from({ length: 80 }, (_, n) => orderLine(n)).join('')}</table><p style="color:#666">Shop GmbH, Torstraße 1, 10119 Berlin</p></td></tr></table></body></html>`,
    recipients: ['Ada <ada@recipient.test>', 'bob@recipient.test'],
  },
  {
    name: 'typical + labels: the typical message with 3 tags and 3 metadata pairs',
    text: typicalText,
    html: typicalHtml,
    recipients: ['Ada <ada@recipient.test>', 'bob@recipient.test'],
    tags: [
      { name: 'category', value: 'order-confirmation' },
      { name: 'shop', value: 'berlin-1' },
      { name: 'template', value: 'order-v7' },
    ],
    metadata: { order_id: '12345', customer_id: 'c-48213', campaign: 'autumn-2026' },
  },
  {
    name: 'typical in batches: the typical message, 500 to a POST /message/batch-1.0',
    text: typicalText,
    html: typicalHtml,
    recipients: ['Ada <ada@recipient.test>', 'bob@recipient.test'],
    via: 'batch',
  },
];

/** Messages a batch request carries in the batch profile. */
export const batchSize = 500;

export interface LifecycleResult {
  profile: Profile;
  messages: number;
  bodyBytes: number;
  /** Per message. */
  writeUnits: Record<string, number>;
  readUnits: Record<string, number>;
  dynamoRequests: number;
  s3: { total: number; put: number; get: number; byCommand: Record<string, number> };
  sqs: { total: number; byCommand: Record<string, number> };
  apiRequests: number;
  lambdaInvocations: number;
  gbSeconds: number;
  logBytes: number;
  /** Table write units per request, by operation: how big the item was at each write. */
  tableWrites: Record<string, { unitsPerRequest: number; requestsPerMessage: number }>;
  /** Table write units per message of single-item writes, by kind of item (`TERM`: search entries). */
  tableWritesByItem: Record<string, number>;
}

const perMessage = (value: number, count: number) => value / count;

function unitsPerMessage(meter: Meter, count: number, kind: 'write' | 'read'): Record<string, number> {
  const result: Record<string, number> = { table: 0, gsi1: 0, gsi2: 0, gsi3: 0, counters: 0 };
  for (const [name, units] of meter.capacity) result[name] = perMessage(units[kind], count);
  return result;
}

/**
 * The add handler's own time per request, from its request log lines (`latencyMs`, measured inside
 * the handler, as Lambda bills it), in the log written since `offset`; undefined when absent.
 */
function handlerSeconds(offset: number, route: string): number | undefined {
  const file = process.env.LOG_FILE;
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    return undefined;
  }
  let total = 0;
  let found = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"message":"request"') || !line.includes(route)) continue;
    const latency = (JSON.parse(line) as { latencyMs?: number }).latencyMs;
    if (typeof latency !== 'number') continue;
    total += latency;
    found += 1;
  }
  return found === 0 ? undefined : total / 1000;
}

const logSize = () => {
  const file = process.env.LOG_FILE;
  try {
    return file === undefined ? 0 : statSync(file).size;
  } catch {
    return 0;
  }
};

/** Yesterday and today (UTC; the benchmark's host runs in UTC): the days counts may be on. */
const countedDays = () =>
  [new Date(Date.now() - 86_400_000), new Date()].map((day) => day.toISOString().slice(0, 10));

/** The account a caller's tokens name (their `sub`: the local identity provider's account claim). */
function accountOf(who: Caller): string {
  const payload = (who.tokens[0] as string).split('.')[1] as string;
  return String(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')).sub);
}

/**
 * Sends `count` messages of a profile through the host and meters them until all are delivered
 * and the statistics' counting consumer has counted them (its writes are part of the lifecycle).
 */
export async function meterLifecycle(
  who: Caller,
  sender: string,
  profile: Profile,
  count: number,
): Promise<LifecycleResult> {
  const body = {
    message_sender: sender,
    to: profile.recipients,
    subject: 'Your order 12345',
    content: { kind: 'mixed', text: profile.text, html: profile.html },
    ...(profile.tags === undefined ? {} : { tags: profile.tags }),
    ...(profile.metadata === undefined ? {} : { metadata: profile.metadata }),
  };
  const route = profile.via === 'batch' ? 'POST /message/batch-1.0' : 'POST /message/add-1.0';
  const logBefore = logSize();
  const account = accountOf(who);
  const countedBefore = await countedFor(account, countedDays());
  const meter = startMeter();
  const uuids: string[] = [];
  const addMs: number[] = [];
  let requests = 0;
  if (profile.via === 'batch') {
    for (let start = 0; start < count; start += batchSize) {
      const messages = Array.from({ length: Math.min(batchSize, count - start) }, () => body);
      const t0 = performance.now();
      const response = await call(who, 'POST', '/message/batch-1.0', { messages });
      addMs.push(performance.now() - t0);
      requests += 1;
      if (response.status !== 200 || response.body.data.accepted !== messages.length)
        throw new Error(`batch failed: ${JSON.stringify(response.body).slice(0, 500)}`);
      for (const result of response.body.data.results) uuids.push(result.message_uuid as string);
    }
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next++ < count) {
          const t0 = performance.now();
          const response = await call(who, 'POST', '/message/add-1.0', body);
          addMs.push(performance.now() - t0);
          requests += 1;
          if (response.status !== 200) throw new Error(`add failed: ${JSON.stringify(response.body)}`);
          uuids.push(response.body.data.message_uuid as string);
        }
      }),
    );
  }
  const deadline = Date.now() + 240_000;
  for (;;) {
    const statuses = await statusesOf(uuids);
    const delivered = [...statuses.values()].filter((status) => status === 'delivered').length;
    if (delivered === count) break;
    if (Date.now() > deadline) throw new Error(`only ${delivered}/${count} delivered in 4 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The counting consumer follows the table stream: wait until it has counted every delivery.
  const recipientsPerMessage = profile.recipients.length;
  for (;;) {
    const counted = await countedFor(account, countedDays());
    if (
      counted.delivered - countedBefore.delivered >= count * recipientsPerMessage &&
      counted.accepted - countedBefore.accepted >= count
    )
      break;
    if (Date.now() > deadline) throw new Error('the statistics did not count every message in 4 minutes');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The event source deletes a batch after the sender returns: wait for the last deletions.
  for (let wait = 0; wait < 50; wait++) {
    if ((meter.requests.get('SQS DeleteMessageBatch') ?? 0) >= meter.receivesWithMessages) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  stopMeter();
  const s3 = requestsOf(meter, 'S3');
  const sqs = requestsOf(meter, 'SQS');
  // Idle long polls are the event source's fixed cost, not the messages'.
  const sqsCounted = { ...sqs.byCommand, ReceiveMessage: meter.receivesWithMessages };
  const sqsTotal = Object.values(sqsCounted).reduce((sum, value) => sum + value, 0);
  // Lambda bills the handler's time, not the gateway's: the handler's own figure when it logged one.
  const apiSeconds = handlerSeconds(logBefore, route) ?? addMs.reduce((sum, ms) => sum + ms, 0) / 1000;
  // The event sources' functions (the sender, the table stream's consumers): each invocation's own
  // duration, at its function's memory.
  const invoked = [...meter.invocations];
  const workerGbSeconds = invoked.reduce((sum, [id, total]) => sum + (total.ms / 1000) * memoryOf(id), 0);
  const workerInvocations = invoked.reduce((sum, [, total]) => sum + total.count, 0);
  return {
    profile,
    messages: count,
    bodyBytes: Buffer.byteLength(profile.text) + Buffer.byteLength(profile.html),
    writeUnits: unitsPerMessage(meter, count, 'write'),
    readUnits: unitsPerMessage(meter, count, 'read'),
    dynamoRequests: perMessage(requestsOf(meter, 'DynamoDB').total, count),
    s3: {
      total: perMessage(s3.total, count),
      put: perMessage(s3.byCommand.PutObject ?? 0, count),
      get: perMessage(s3.byCommand.GetObject ?? 0, count),
      byCommand: s3.byCommand,
    },
    sqs: { total: perMessage(sqsTotal, count), byCommand: sqsCounted },
    apiRequests: perMessage(requests, count),
    // The API function, the sender per queue batch, and the table stream's consumers (webhook fan-out,
    // statistics) per stream batch; the stream's own reads by a Lambda trigger are free on AWS.
    lambdaInvocations: perMessage(requests + workerInvocations, count),
    gbSeconds: perMessage(apiSeconds * memoryGb.api + workerGbSeconds, count),
    logBytes: perMessage(logSize() - logBefore, count),
    tableWritesByItem: Object.fromEntries(
      [...meter.tableWritesByItem].map(([kind, units]) => [kind, perMessage(units, count)]),
    ),
    tableWrites: Object.fromEntries(
      [...meter.tableWritesByOperation].map(([operation, { units, requests }]) => [
        operation,
        { unitsPerRequest: units / requests, requestsPerMessage: requests / count },
      ]),
    ),
  };
}

/** Runs `work` under the meter: DynamoDB requests, read and write units, and its time. */
async function metered<T>(
  work: () => Promise<T>,
): Promise<{ result: T; requests: number; readUnits: number; writeUnits: number; ms: number }> {
  const meter = startMeter();
  const t0 = performance.now();
  const result = await work();
  const ms = performance.now() - t0;
  stopMeter();
  let readUnits = 0;
  let writeUnits = 0;
  for (const units of meter.capacity.values()) {
    readUnits += units.read;
    writeUnits += units.write;
  }
  return { result, requests: requestsOf(meter, 'DynamoDB').total, readUnits, writeUnits, ms };
}

/** One dispatcher run (every minute on AWS): its requests and read units, a fixed monthly cost. */
export async function meterDispatcherRun(): Promise<{
  requests: number;
  readUnits: number;
  writeUnits: number;
  ms: number;
}> {
  const { handler } = await import('../functions/dispatcher/handler.ts');
  const run = await metered(() => handler({}));
  // DynamoDB Local reports 0 for a Query that finds nothing; DynamoDB bills at least 0.5 read unit
  // (eventually consistent) for every Query.
  return { ...run, readUnits: Math.max(run.readUnits, run.requests * 0.5) };
}

/**
 * The dispatcher's pass over the watch entries the section's messages left (one each, written at
 * add): a run whose window reaches past their watch times, when every one of them is settled, as on
 * AWS a minute or two after the messages went out. Gives what one entry costs the dispatcher (its
 * share of a keys-only Query, and one consistent read of its item) and how fast one run gets through
 * entries here.
 */
export interface WatchPass {
  entries: number;
  readUnitsPerEntry: number;
  writeUnitsPerEntry: number;
  requestsPerEntry: number;
  entriesPerSecond: number;
  ms: number;
}

export async function meterWatchPass(): Promise<WatchPass> {
  const { dispatchDue } = await import('../shared/delivery/dispatch.ts');
  const { firstWatchAt } = await import('../shared/messages/config.ts');
  const run = await metered(() => dispatchDue(Date.parse(firstWatchAt(Date.now())) + 1_000));
  const entries = Math.max(1, run.result.watched);
  return {
    entries: run.result.watched,
    readUnitsPerEntry: run.readUnits / entries,
    writeUnitsPerEntry: run.writeUnits / entries,
    requestsPerEntry: run.requests / entries,
    entriesPerSecond: run.result.watched / (run.ms / 1000),
    ms: run.ms,
  };
}

export interface CostLine {
  item: string;
  perMillion: number;
  basis: string;
}

export function costPerMillion(result: LifecycleResult, api: 'rest' | 'http'): CostLine[] {
  const writes = Object.values(result.writeUnits).reduce((sum, value) => sum + value, 0);
  const reads = Object.values(result.readUnits).reduce((sum, value) => sum + value, 0);
  return [
    {
      item: 'DynamoDB writes',
      perMillion: writes * prices.dynamoWriteUnit,
      basis: `${fmt(writes, 2)} WRU × $${prices.dynamoWriteUnit}`,
    },
    {
      item: 'DynamoDB reads',
      perMillion: reads * prices.dynamoReadUnit,
      basis: `${fmt(reads, 2)} RRU × $${prices.dynamoReadUnit}`,
    },
    {
      item: 'S3 requests',
      perMillion: result.s3.put * prices.s3Put + result.s3.get * prices.s3Get,
      basis: `${fmt(result.s3.put, 2)} PUT × $${prices.s3Put} + ${fmt(result.s3.get, 2)} GET × $${prices.s3Get}`,
    },
    {
      item: 'SQS requests',
      perMillion: result.sqs.total * prices.sqsRequest,
      basis: `${fmt(result.sqs.total, 2)} requests × $${prices.sqsRequest}`,
    },
    {
      item: api === 'rest' ? 'API Gateway (REST API, as deployed)' : 'API Gateway (HTTP API, alternative)',
      perMillion: result.apiRequests * (api === 'rest' ? prices.apiRest : prices.apiHttp),
      basis: `${fmt(result.apiRequests, 2)} requests × $${api === 'rest' ? prices.apiRest : prices.apiHttp}`,
    },
    {
      item: 'Lambda requests',
      perMillion: result.lambdaInvocations * prices.lambdaRequest,
      basis: `${fmt(result.lambdaInvocations, 2)} invocations × $${prices.lambdaRequest}`,
    },
    {
      item: 'Lambda duration',
      perMillion: result.gbSeconds * prices.lambdaGbSecond * 1e6,
      basis: `${fmt(result.gbSeconds, 3)} GB-s (measured here: an upper bound) × $${prices.lambdaGbSecond}`,
    },
    {
      item: 'CloudWatch Logs ingestion',
      perMillion: (result.logBytes / 1024 ** 3) * prices.logsIngestGb * 1e6,
      basis: `${fmt(result.logBytes, 0)} bytes of log lines × $${prices.logsIngestGb}/GB`,
    },
  ];
}

export interface Ceilings {
  perAccount: number;
  serviceWide: number;
  rows: Array<{
    index: string;
    units: number;
    keysPerAccount: string;
    keysServiceWide: string;
    perAccount: number;
    serviceWide: number;
  }>;
}

/**
 * Messages per second before one partition key reaches DynamoDB's 1,000 write units per second,
 * from the measured write units of each index and how its keys spread (shared/platform/table/keys.ts):
 * the table's key is the message; gsi1 holds an account's domains, no message; gsi2 keys belong to
 * one account's shard (gsi2's writes of a lifecycle all land in one lane partition, counted as if
 * on one shard); gsi3 keys are the service's work shards, over which even one account's messages
 * spread (by uuid).
 */
export function ceilings(units: Record<string, number>): Ceilings {
  const per = (shards: number, value: number) =>
    value > 0 ? (partitionWriteLimit * shards) / value : Infinity;
  const rows = [
    {
      index: 'table',
      units: units.table ?? 0,
      keysPerAccount: 'one per message',
      keysServiceWide: 'one per message',
      perAccount: Infinity,
      serviceWide: Infinity,
    },
    {
      index: 'gsi1',
      units: units.gsi1 ?? 0,
      keysPerAccount: 'none (domains only)',
      keysServiceWide: 'one per account (domains)',
      perAccount: per(shardCount.account, units.gsi1 ?? 0),
      serviceWide: Infinity,
    },
    {
      index: 'gsi2',
      units: units.gsi2 ?? 0,
      keysPerAccount: `${shardCount.account} per lane`,
      keysServiceWide: `${shardCount.account} per account and lane`,
      perAccount: per(shardCount.account, units.gsi2 ?? 0),
      serviceWide: Infinity,
    },
    {
      index: 'gsi3',
      units: units.gsi3 ?? 0,
      keysPerAccount: `all ${shardCount.work} (by uuid)`,
      keysServiceWide: `${shardCount.work}`,
      perAccount: per(shardCount.work, units.gsi3 ?? 0),
      serviceWide: per(shardCount.work, units.gsi3 ?? 0),
    },
    {
      // Written per stream batch, not per message: the figure falls as batches fill. Counted as if
      // every counter write went to the account-wide partition (its domain and tag rows spread
      // over `statsWriters` more).
      index: 'counters (table)',
      units: units.counters ?? 0,
      keysPerAccount: `1 account-wide + ${statsWriters} for domains and tags`,
      keysServiceWide: `1 + ${statsWriters} per account`,
      perAccount: per(1, units.counters ?? 0),
      serviceWide: Infinity,
    },
  ];
  return {
    rows,
    perAccount: Math.min(...rows.map((row) => row.perAccount)),
    serviceWide: Math.min(...rows.map((row) => row.serviceWide)),
  };
}

const shown = (value: number) => (Number.isFinite(value) ? fmt(value, 0) : 'no limit');

/** The section of the report: tables and the verdicts against the targets. */
export function scaleReport(
  results: LifecycleResult[],
  dispatcher: { requests: number; readUnits: number; writeUnits: number; ms: number },
  watch: WatchPass,
): string[] {
  const lines: string[] = [];
  const typical = results[0] as LifecycleResult;
  lines.push('### 7. Scale and cost (full lifecycle add → delivered, counted)', '');
  lines.push(
    `Each profile: ${typical.messages} messages added through the local gateway (4 at a time; the batch profile: ${results.find((result) => result.profile.via === 'batch')?.messages ?? 0} messages, ${batchSize} to a \`POST /message/batch-1.0\`), sent by the sender through the SMTP sink until every one is \`delivered\` and the statistics' counting consumer has counted it (its writes are the \`counters\` column: per stream batch, so they fall as batches fill). DynamoDB units are DynamoDB Local's \`ConsumedCapacity\` (\`INDEXES\`) of every request the service made; requests are counted at the AWS SDK of the service's process (the handlers and the event-source loop), not estimated. Lambda duration is each invocation's own time at its function's memory, as Lambda bills it: the API function per request, the sender per queue batch (1,024 MB), the table stream's consumers per stream batch; the time a received batch waits in the local event source for a free invocation is not billed, and not counted. With three sender invocations and the emulators sharing 2 cores, it is an upper bound.`,
    '',
  );
  lines.push('Write and read units per message, by table and index:', '');
  lines.push(
    '| profile | bodies | table W | gsi1 W | gsi2 W | gsi3 W | counters W | **total W** | table R | gsi R | dispatcher R | DynamoDB requests |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const result of results) {
    const w = result.writeUnits;
    const r = result.readUnits;
    const total = Object.values(w).reduce((sum, value) => sum + value, 0);
    const indexReads = (r.gsi1 ?? 0) + (r.gsi2 ?? 0) + (r.gsi3 ?? 0);
    lines.push(
      `| ${result.profile.name} | ${fmt(result.bodyBytes / 1024, 1)} KB | ${fmt(w.table ?? 0, 2)} | ${fmt(w.gsi1 ?? 0, 2)} | ${fmt(w.gsi2 ?? 0, 2)} | ${fmt(w.gsi3 ?? 0, 2)} | ${fmt(w.counters ?? 0, 2)} | **${fmt(total, 2)}** | ${fmt(r.table ?? 0, 2)} | ${fmt(indexReads, 2)} | ${fmt(r.dispatcher ?? 0, 2)} | ${fmt(result.dynamoRequests, 2)} |`,
    );
  }
  lines.push('');
  lines.push(
    `Table writes by request (item size in 1 KB write units): ${results
      .map(
        (result) =>
          `${result.profile.name.split(':')[0]}: ${Object.entries(result.tableWrites)
            .map(
              ([operation, entry]) =>
                `${fmt(entry.requestsPerMessage, 2)} × ${operation} of ${fmt(entry.unitsPerRequest, 2)} units`,
            )
            .join(', ')}`,
      )
      .join('; ')}.`,
    '',
  );
  lines.push(
    `Table write units per message of single-item writes, by item (\`CONTENT\`: the content item, which is also the first recipient's search entry; \`TERM\`: the other search entries, one per recipient, tag and metadata pair): ${results
      .filter((result) => result.profile.via !== 'batch')
      .map(
        (result) =>
          `${result.profile.name.split(':')[0]}: ${Object.entries(result.tableWritesByItem)
            .map(([kind, units]) => `${kind} ${fmt(units, 2)}`)
            .join(', ')}`,
      )
      .join('; ')} (the batch profile writes with BatchWriteItem, which reports units per request only).`,
    '',
  );
  lines.push('Requests per message to the other services:', '');
  lines.push(
    '| profile | S3 | SQS (counted by command) | API Gateway | Lambda invocations | Lambda GB-s | log bytes |',
    '|---|---|---|---:|---:|---:|---:|',
  );
  for (const result of results) {
    const s3 = Object.entries(result.s3.byCommand)
      .map(([command, count]) => `${command} ${fmt(count / result.messages, 2)}`)
      .join(', ');
    const sqs = Object.entries(result.sqs.byCommand)
      .map(([command, count]) => `${command} ${fmt(count / result.messages, 2)}`)
      .join(', ');
    lines.push(
      `| ${result.profile.name} | ${s3 || 'none'} | ${sqs} | ${fmt(result.apiRequests, 2)} | ${fmt(result.lambdaInvocations, 2)} | ${fmt(result.gbSeconds, 3)} | ${fmt(result.logBytes, 0)} |`,
    );
  }
  lines.push('');
  const ceiling = ceilings(typical.writeUnits);
  lines.push(
    `Ceilings at ${partitionWriteLimit.toLocaleString('en')} write units per second per partition key (typical profile):`,
    '',
  );
  lines.push(
    '| table / index | W per message | keys for one account | keys for the service | messages/s, one account | messages/s, service |',
    '|---|---:|---|---|---:|---:|',
  );
  for (const row of ceiling.rows)
    lines.push(
      `| ${row.index} | ${fmt(row.units, 2)} | ${row.keysPerAccount} | ${row.keysServiceWide} | ${shown(row.perAccount)} | ${shown(row.serviceWide)} |`,
    );
  lines.push('');
  // One run a minute must get through a minute of entries; a shard it cannot finish records how far
  // it got, and the next run goes on from there.
  const perRunAtTenThousand = 10_000 * 60;
  lines.push(
    `The dispatcher reads each message's watch entry once, after the message went out (\`WATCH#<n>\`, ${shardCount.work} shards, read forward from a mark): here one run went through ${watch.entries.toLocaleString('en')} settled entries in ${fmt(watch.ms, 0)} ms, ${fmt(watch.entriesPerSecond, 0)} entries/s on DynamoDB Local on this shared machine (${fmt(watch.requestsPerEntry, 3)} requests, ${fmt(watch.readUnitsPerEntry, 2)} read units and ${fmt(watch.writeUnitsPerEntry, 3)} write units per entry: its share of a keys-only Query page and of a consistent BatchGetItem of 100 items; the \`dispatcher R\` column). At 10,000 messages/s a one-minute run meets ${perRunAtTenThousand.toLocaleString('en')} entries: ${fmt(perRunAtTenThousand / Math.max(1, watch.entriesPerSecond), 0)} s at this rate, against the function's 60 s. On AWS a page of 100 entries is one Query and one BatchGetItem (about 10-30 ms each), 8 shards at a time: roughly 15,000-40,000 entries/s, so the dispatcher, not a partition key, is the service's first limit near 10,000 messages/s (docs/data-model.md, "Scale").`,
    '',
  );
  lines.push(
    `AWS cost per million messages, prices ${prices.region} as of ${prices.dated} (\`bench/scale-cost.ts\`); SES itself is $${fmt(prices.sesMessage * 1e6, 2)} per million:`,
    '',
  );
  const costs = results.map((result) => ({
    rest: costPerMillion(result, 'rest'),
    http: costPerMillion(result, 'http'),
  }));
  lines.push(
    `| item | ${results.map((result) => result.profile.name.split(':')[0]).join(' | ')} | basis (typical) |`,
    `|---|${results.map(() => '---:').join('|')}|---|`,
  );
  const typicalCost = costs[0] as { rest: CostLine[]; http: CostLine[] };
  typicalCost.rest.forEach((line, index) => {
    lines.push(
      `| ${line.item} | ${costs.map((cost) => `$${fmt((cost.rest[index] as CostLine).perMillion, 2)}`).join(' | ')} | ${line.basis} |`,
    );
  });
  const sum = (list: CostLine[]) => list.reduce((total, line) => total + line.perMillion, 0);
  lines.push(
    `| **total, REST API (as deployed)** | ${costs.map((cost) => `**$${fmt(sum(cost.rest), 2)}**`).join(' | ')} | |`,
  );
  lines.push(
    `| total with an HTTP API instead | ${costs.map((cost) => `$${fmt(sum(cost.http), 2)}`).join(' | ')} | API Gateway at $${prices.apiHttp} instead of $${prices.apiRest} |`,
  );
  const withoutDuration = (list: CostLine[]) =>
    sum(list) - list.filter((line) => line.item === 'Lambda duration').reduce((t, l) => t + l.perMillion, 0);
  lines.push(
    `| total without Lambda duration (REST / HTTP API) | ${costs.map((cost) => `$${fmt(withoutDuration(cost.rest), 2)} / $${fmt(withoutDuration(cost.http), 2)}`).join(' | ')} | the duration measured on this shared machine is an upper bound |`,
  );
  lines.push(
    `| SES (beside, not included) | ${results.map(() => `$${fmt(prices.sesMessage * 1e6, 2)}`).join(' | ')} | $0.10 per 1,000 |`,
  );
  lines.push('');
  const runsPerMonth = 60 * 24 * 30;
  const dispatcherMonthly =
    runsPerMonth *
    (dispatcher.readUnits * (prices.dynamoReadUnit / 1e6) +
      dispatcher.writeUnits * (prices.dynamoWriteUnit / 1e6) +
      prices.lambdaRequest / 1e6 +
      (dispatcher.ms / 1000) * memoryGb.dispatcher * prices.lambdaGbSecond);
  lines.push(
    `Fixed cost, not per message: one dispatcher run (idle service) makes ${dispatcher.requests} DynamoDB requests (${shardCount.work} work shards × 3 families: due, watch and the drained in-flight index of earlier releases; and one read of the marks) for ${fmt(dispatcher.readUnits, 1)} read units (at least 0.5 per Query, as billed) and ${fmt(dispatcher.writeUnits, 1)} write units (a mark is written only when its window held entries) in ${fmt(dispatcher.ms, 0)} ms here; at one run a minute that is about $${fmt(dispatcherMonthly, 2)} a month. The event source's idle long polls are not counted per message.`,
    '',
  );
  const totalWrites = Object.values(typical.writeUnits).reduce((sum, value) => sum + value, 0);
  const restTotal = sum(typicalCost.rest);
  const httpTotal = sum(typicalCost.http);
  lines.push('| target | figure (typical profile) | verdict |', '|---|---|---|');
  lines.push(
    `| service-wide ceiling ≥ 10,000 messages/s | ${shown(ceiling.serviceWide)} messages/s | ${checkTarget('ceiling-service', `${shown(ceiling.serviceWide)} messages/s`, ceiling.serviceWide >= 10_000)} |`,
  );
  lines.push(
    `| one account ≥ 1,000 messages/s | ${shown(ceiling.perAccount)} messages/s | ${checkTarget('ceiling-account', `${shown(ceiling.perAccount)} messages/s`, ceiling.perAccount >= 1_000)} |`,
  );
  lines.push(
    `| ≤ 8 write units per message, the statistics' counters included | ${fmt(totalWrites, 2)} (counters ${fmt(typical.writeUnits.counters ?? 0, 2)}; ${fmt(recipientUnits(typical), 2)} for the search entry of its second recipient: the content item is the first's) | ${checkTarget('write-units', fmt(totalWrites, 2), totalWrites <= 8)} |`,
  );
  // What the REST API and the DynamoDB writes cost by themselves, before any compute, queue or log.
  const restFloor = typical.apiRequests * prices.apiRest + totalWrites * prices.dynamoWriteUnit;
  lines.push(
    `| AWS cost excluding SES ≤ $8 per million | $${fmt(restTotal, 2)} with the REST API ($${fmt(httpTotal, 2)} with an HTTP API) | ${checkTarget('cost-typical', `$${fmt(restTotal, 2)} (HTTP API $${fmt(httpTotal, 2)})`, restTotal <= 8)}${restTotal > 8 && httpTotal <= 8 ? ' (met with an HTTP API)' : ''}${restTotal > 8 ? `: the REST API and the DynamoDB writes alone are $${fmt(restFloor, 2)}` : ''} |`,
  );
  const batched = results.find((result) => result.profile.via === 'batch');
  if (batched !== undefined) {
    const batchedCost = sum(costPerMillion(batched, 'rest'));
    lines.push(
      `| batch profile (${batchSize} a request): AWS cost excluding SES ≤ $6 per million | $${fmt(batchedCost, 2)} with the REST API ($${fmt(withoutDuration(costPerMillion(batched, 'rest')), 2)} without Lambda duration) | ${checkTarget('cost-batch', `$${fmt(batchedCost, 2)}`, batchedCost <= 6)} |`,
    );
  }
  const labelled = results.find((result) => result.profile.tags !== undefined);
  if (labelled !== undefined) {
    const extra = totalOf(labelled.writeUnits) - totalWrites;
    lines.push(
      `| write units of tags and metadata, counted and published | +${fmt(extra, 2)} per message for ${labelled.profile.tags?.length ?? 0} tags and ${Object.keys(labelled.profile.metadata ?? {}).length} metadata pairs (one search entry each, 1 unit, plus the larger message item) | published |`,
    );
  }
  lines.push('');
  return lines;
}

const totalOf = (units: Record<string, number>) =>
  Object.values(units).reduce((sum, value) => sum + value, 0);

/** Write units per message of the search entries besides the content item, measured on the add path. */
const recipientUnits = (result: LifecycleResult) => result.tableWritesByItem.TERM ?? 0;

/** Runs the section: every profile, then one dispatcher run. */
export async function scaleAndCost(who: Caller, sender: string, messages: number): Promise<string[]> {
  const results: LifecycleResult[] = [];
  for (const profile of profiles) {
    // The batch profile sends one full batch (its smoke test in --quick, as many as the others).
    const count = profile.via === 'batch' && messages >= 200 ? batchSize : messages;
    progress(`  lifecycle: ${count} messages, ${profile.name}`);
    const result = await meterLifecycle(who, sender, profile, count);
    const total = Object.values(result.writeUnits).reduce((sum, value) => sum + value, 0);
    progress(
      `    ${fmt(total, 2)} write units/message (${Object.entries(result.writeUnits)
        .map(([name, value]) => `${name} ${fmt(value, 2)}`)
        .join(', ')}); S3 ${fmt(result.s3.total, 2)}, SQS ${fmt(result.sqs.total, 2)} requests/message`,
    );
    results.push(result);
  }
  // An idle run (the section's watch entries are not due yet), then a run whose window reaches past
  // them all.
  const dispatcher = await meterDispatcherRun();
  progress(`  dispatcher run: ${dispatcher.requests} requests, ${fmt(dispatcher.readUnits, 1)} read units`);
  const watch = await meterWatchPass();
  progress(
    `  watch pass: ${watch.entries} entries in ${fmt(watch.ms, 0)} ms, ${fmt(watch.readUnitsPerEntry, 2)} read units each`,
  );
  // Each message's entry is read once by the dispatcher: its reads and its share of the run.
  for (const result of results) {
    result.readUnits.dispatcher = watch.readUnitsPerEntry;
    result.gbSeconds += (watch.ms / 1000 / Math.max(1, watch.entries)) * memoryGb.dispatcher;
  }
  void figure;
  return scaleReport(results, dispatcher, watch);
}
