import './environment.ts';
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { registerDomain } from '../shared/domains/registry.ts';
import { firstWatchAt } from '../shared/messages/config.ts';
import { listMessages } from '../shared/messages/query.ts';
import { messageIndexAttributes } from '../shared/messages/store/message-index.ts';
import { keys } from '../shared/platform/table/keys.ts';
import { routes } from '../shared/routes.ts';
import { workers } from '../shared/workers.ts';
import { apiKeysSection, keyUsageWrites } from './apikeys.ts';
import { batchAndSearch, batchPlan } from './batch.ts';
import { type ColdStartRow, coldStart } from './cold-start.ts';
import { consoleBench } from './console.ts';
import { domainsSection } from './domains.ts';
import { benchHost } from './host.ts';
import { htmlToTextSection } from './html-to-text.ts';
import { inboundSection } from './inbound.ts';
import { largeAddBench } from './large-add.ts';
import { excludeClient } from './meter.ts';
import { scaleAndCost } from './scale-cost.ts';
import {
  addBody,
  addMessage,
  batchWrite,
  type Caller,
  call,
  cloneItem,
  raw,
  rawDynamo,
  statusesOf,
  storedItem,
  table,
} from './service.ts';
import { smtpSection } from './smtp.ts';
import { type Figure, figure, fmt, fmtFigure, progress, verdict } from './stats.ts';
import { statsSection } from './stats-query.ts';
import { streamsSection } from './streams.ts';
import { checkTarget, targetsTable } from './targets.ts';
import { templateLinearity, templatesBench } from './templates.ts';
import { trackingBench } from './tracking.ts';

/**
 * `npm run bench [-- --quick]`: cold starts, warm overhead, throughput, scaling, delivery and memory
 * (see docs/benchmarks.md). A benchmark, not a test: it never fails on slow figures, only when the
 * service itself misbehaves.
 */
const quick = process.argv.includes('--quick');
/**
 * `--only=memory,delivery`: run only these sections (warm, templates, large, throughput, scaling, delivery,
 * memory, inbound, batch, stats, console, html-to-text, apikeys, domains, streams, tracking, smtp);
 * the cold start always runs, as it builds the bundles the memory section loads. The table then
 * goes to $TMPDIR, like `--quick`'s.
 */
const onlyArgument = process.argv.find((arg) => arg.startsWith('--only='));
const only =
  onlyArgument === undefined ? undefined : new Set(onlyArgument.slice('--only='.length).split(','));
const runs = (
  section:
    | 'warm'
    | 'templates'
    | 'large'
    | 'throughput'
    | 'scaling'
    | 'delivery'
    | 'memory'
    | 'inbound'
    | 'batch'
    | 'stats'
    | 'console'
    | 'domains'
    | 'html-to-text'
    | 'apikeys'
    | 'streams'
    | 'tracking'
    | 'smtp',
): boolean => only === undefined || only.has(section);
/**
 * `--only=cold`: just the cold-start section (1), written to $TMPDIR/svc-mail-benchmarks-cold.md
 * (docs/benchmarks.md is left alone), to compare bundles before and after a change.
 */
const coldOnly = only?.size === 1 && only.has('cold');
/** `--only scale` (or `--only=scale`): just the scale-and-cost section (7), written into docs/benchmarks.md in place. */
const scaleOnly = only?.has('scale') === true || process.argv[process.argv.indexOf('--only') + 1] === 'scale';
const started = Date.now();
const plan = quick
  ? {
      coldRuns: 2,
      warmRounds: 15,
      throughputSeconds: 2,
      small: 1_000,
      large: 10_000,
      scaleRounds: 10,
      statsRounds: 10,
      deliveryMessages: 10,
      deliveryRuns: 1,
      memorySeconds: 1,
      scaleMessages: 20,
    }
  : {
      coldRuns: 15,
      warmRounds: 60,
      throughputSeconds: 10,
      small: 1_000,
      large: 100_000,
      scaleRounds: 30,
      // A round takes a few milliseconds, and the two answers differ by a fraction of one: enough
      // rounds that the median ratio is not the machine's noise.
      statsRounds: 300,
      deliveryMessages: 60,
      deliveryRuns: 3,
      memorySeconds: 5,
      scaleMessages: 200,
    };
const functionIds = [...new Set([...routes.map((r) => r.id), ...workers.map((w) => w.id)])];
const apiIds = new Set<string>(routes.map((r) => r.id));
const workDir = mkdtempSync(join(tmpdir(), 'svc-mail-bundles-'));

/** Section 1's table, the largest inputs per bundle and the size and ratio targets. */
function coldStartSection(rows: readonly ColdStartRow[]): string[] {
  const kb = (bytes: number) => `${fmt(bytes / 1024, 0)} KB`;
  const out: string[] = [];
  const largestApi = rows
    .filter((row) => apiIds.has(row.id))
    .sort((a, b) => b.bytes - a.bytes)[0] as ColdStartRow;
  out.push('### 1. Cold start', '');
  out.push(
    '| function | bundle (all chunks) | loaded at start + lazy chunks | baseline at start | baseline packages | import ms | baseline import ms | ratio (own / baseline) | process wall − empty ms |',
  );
  out.push('|---|---:|---:|---:|---|---:|---:|---:|---:|');
  for (const row of rows) {
    out.push(
      `| ${row.id} | ${kb(row.bytes + row.chunkBytes)} | ${kb(row.splitMainBytes)} + ${kb(row.splitChunkBytes)} | ${kb(row.baselineBytes)} | ${row.baselinePackages.join(', ') || '—'} | ${fmtFigure(row.importMs)} | ${fmtFigure(row.baselineImportMs)} | ${fmtFigure(row.ratio, 2)} | ${fmtFigure(row.wallNetMs, 0)} |`,
    );
  }
  out.push('');
  out.push(
    `Empty Node process: ${fmtFigure(figure(rows.map((row) => row.emptyProcessMs.median)), 0)} ms wall time.`,
    '',
  );
  out.push('Largest inputs per bundle (KB in output):', '');
  for (const row of rows)
    out.push(
      `- ${row.id}: ${row.topInputs.map(([name, bytes]) => `${name} ${fmt(bytes / 1024, 0)}`).join(', ')}`,
    );
  out.push('');
  const healthRow = rows.find((row) => row.id === 'health') as ColdStartRow;
  const keepaliveRow = rows.find((row) => row.id === 'keepalive-status') as ColdStartRow;
  const overRatio = rows.filter((row) => row.ratio.median > 1.1).map((row) => row.id);
  out.push('| target | figure | verdict |', '|---|---|---|');
  out.push(
    `| own code adds ≤ 10 % (ratio ≤ 1.1) | over for: ${overRatio.join(', ') || 'none'} | ${checkTarget('cold-own-code', `over for: ${overRatio.join(', ') || 'none'}`, overRatio.length === 0)} |`,
  );
  out.push(
    `| health ≤ 20 KB | ${kb(healthRow.bytes)} | ${checkTarget('health-size', kb(healthRow.bytes), healthRow.bytes <= 20 * 1024)} |`,
  );
  out.push(
    `| GET keepalive ≤ 20 KB | ${kb(keepaliveRow.bytes)} | ${checkTarget('keepalive-size', kb(keepaliveRow.bytes), keepaliveRow.bytes <= 20 * 1024)} |`,
  );
  out.push(
    `| largest API function ≤ 500 KB at start | ${largestApi.id}: ${kb(largestApi.bytes)} | ${checkTarget('api-start-size', `${largestApi.id}: ${kb(largestApi.bytes)}`, largestApi.bytes <= 500 * 1024)} |`,
  );
  const senderRow = rows.find((row) => row.id === 'sender') as ColdStartRow;
  out.push(
    `| sender bundle ≤ 700 KB at start | ${kb(senderRow.bytes)} (+ ${kb(senderRow.chunkBytes)} lazy) | ${checkTarget('sender-start-size', kb(senderRow.bytes), senderRow.bytes <= 700 * 1024)} |`,
    `| sender cold import ≤ 1.4 × its SDK-only baseline | ${fmtFigure(senderRow.ratio, 2)} | ${checkTarget('sender-cold-import', fmtFigure(senderRow.ratio, 2), senderRow.ratio.median <= 1.4)} |`,
  );
  out.push('');
  return out;
}

progress(`mode: ${quick ? 'quick' : 'full'}; bundles in ${workDir}`);
const host = await benchHost();
const account = `bench-${randomUUID().slice(0, 8)}`;
const domain = `${account}.test`;
await registerDomain(domain, account);
async function callerFor(name: string): Promise<Caller> {
  return { url: host.url, tokens: await Promise.all(Array.from({ length: 8 }, () => host.mint(name))) };
}
const who: Caller = await callerFor(account);
const sender = `noreply@${domain}`;
excludeClient(rawDynamo);

const scaleMarkers = ['<!-- scale-and-cost:start -->', '<!-- scale-and-cost:end -->'] as const;
if (scaleOnly) {
  progress(`7 scale and cost only (${plan.scaleMessages} messages per profile)`);
  const section = await scaleAndCost(who, sender, plan.scaleMessages);
  await host.stop();
  const text = [
    scaleMarkers[0],
    `Section 7 run alone (\`npm run bench -- --only scale${quick ? ' --quick' : ''}\`) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 0)} GB RAM; Node ${process.version}.`,
    '',
    ...section,
    scaleMarkers[1],
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  const target = quick
    ? join(tmpdir(), 'svc-mail-benchmarks-scale.md')
    : join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
  const current = quick ? '' : readFileSync(target, 'utf8');
  const start = current.indexOf(scaleMarkers[0]);
  const end = current.indexOf(scaleMarkers[1]);
  // In place of the previous section 7, else after section 6 (before the notes), else at the end.
  const notesAt = current.indexOf('\n## How to run');
  const updated =
    start !== -1 && end !== -1
      ? `${current.slice(0, start)}${text}${current.slice(end + scaleMarkers[1].length)}`
      : notesAt !== -1
        ? `${current.slice(0, notesAt).trimEnd()}\n\n${text}\n${current.slice(notesAt)}`
        : `${current.trimEnd()}\n\n${text}\n`;
  writeFileSync(target, updated);
  progress(`wrote ${target}`);
  if (host.ownHost) rmSync(host.dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// 1. Cold start
progress('1/7 cold start: bundling every function with the stack’s esbuild options');
const cold = await coldStart(functionIds, workDir, plan.coldRuns, host.env);
if (coldOnly) {
  await host.stop();
  const cpu = cpus();
  const text = [
    `Section 1 run alone (\`npm run bench -- --only=cold${quick ? ' --quick' : ''}\`) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 0)} GB RAM; Node ${process.version}; ${plan.coldRuns} cold-start rounds. Figures: median (min–max).`,
    '',
    ...coldStartSection(cold),
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  const target = join(tmpdir(), 'svc-mail-benchmarks-cold.md');
  writeFileSync(target, `${text}\n`);
  progress(`wrote ${target}`);
  if (host.ownHost) rmSync(host.dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// 2. Warm overhead
progress('2/7 warm overhead: service endpoints against the raw SDK calls they must make');
const template = await storedItem(await addMessage(who, sender));
const existing = await addMessage(who, sender);
const window = { from: '2000-01-01T00:00:00+00:00', to: '2100-01-01T00:00:00+00:00' };
interface WarmRow {
  name: string;
  rawCalls: string;
  service: Figure;
  raw: Figure;
  ratio: Figure;
}
const warmOps: Array<{
  name: string;
  rawCalls: string;
  service: () => Promise<unknown>;
  raw: () => Promise<unknown>;
}> = [
  {
    name: 'health (floor: HTTP + chain, no AWS call)',
    rawCalls: 'none',
    service: () => call(who, 'GET', '/health'),
    raw: async () => undefined,
  },
  {
    name: 'add (manual-wait)',
    rawCalls: 'GetItem domain + PutItem (content item, its recipient’s search entry) + conditional PutItem',
    service: () => addMessage(who, sender),
    raw: () => raw.add(domain, cloneItem(template, account, 'waiting', new Date())),
  },
  {
    name: 'query by uuid',
    rawCalls: 'GetItem (consistent)',
    service: () => call(who, 'POST', '/message/query-1.0', { message_uuid: existing }),
    raw: () => raw.queryUuid(existing),
  },
  {
    name: 'query with filters',
    rawCalls: 'Query gsi2 × 4 shards (status, date range) + BatchGetItem of the page, limit 50',
    service: () =>
      call(who, 'POST', '/message/query-1.0', {
        filters: { status: 'waiting', date_from: window.from, date_to: window.to, limit: 50 },
      }),
    raw: () => raw.queryFilters(account, 'waiting', '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z'),
  },
  {
    name: 'delete',
    rawCalls:
      'BatchGetItem + conditional DeleteItem + DeleteItem (content item, its recipient’s search entry)',
    service: async () => undefined,
    raw: async () => undefined,
  },
  {
    name: 'DKIM status',
    rawCalls: 'GetItem domain + Query keys',
    service: () => call(who, 'GET', `/domain/dkim/status-1.0?domain=${domain}`),
    raw: () => raw.dkimStatus(domain),
  },
];
const warm: WarmRow[] = [];
for (const op of runs('warm') ? warmOps : []) {
  const serviceTimes: number[] = [];
  const rawTimes: number[] = [];
  const ratios: number[] = [];
  for (let round = -3; round < plan.warmRounds; round++) {
    let serviceCall = op.service;
    let rawCall = op.raw;
    if (op.name === 'delete') {
      // Fresh victims outside the timed part: one through the API, one put directly.
      const victim = await addMessage(who, sender);
      const rawVictim = cloneItem(template, account, 'waiting', new Date());
      await raw.put(rawVictim);
      serviceCall = async () => {
        const response = await call(who, 'POST', '/message/delete-1.0', { message_uuids: [victim] });
        if (response.status !== 200) throw new Error(`delete failed: ${JSON.stringify(response.body)}`);
      };
      rawCall = () => raw.delete(String(rawVictim.message_uuid), account);
    }
    const t0 = performance.now();
    await serviceCall();
    const t1 = performance.now();
    await rawCall();
    const t2 = performance.now();
    if (round < 0) continue;
    serviceTimes.push(t1 - t0);
    rawTimes.push(t2 - t1);
    ratios.push((t1 - t0) / (t2 - t1));
  }
  warm.push({
    name: op.name,
    rawCalls: op.rawCalls,
    service: figure(serviceTimes),
    raw: figure(rawTimes),
    ratio: figure(ratios),
  });
  progress(`  ${op.name}: ${fmt(figure(serviceTimes).median)} ms vs raw ${fmt(figure(rawTimes).median)} ms`);
}

const templatesSection = runs('templates')
  ? [...(await templatesBench(who, sender, plan.warmRounds)), ...(await templateLinearity(quick ? 3 : 7))]
  : [];
const largeAddSection = runs('large') ? await largeAddBench(who, sender, Math.min(plan.warmRounds, 10)) : [];

// ---------------------------------------------------------------------------------------------
// 3. Throughput
progress('3/7 throughput: add at 1, 8 and 32 concurrent clients');
interface ThroughputRow {
  connections: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}
function load(url: string, connections: number, seconds: number, options: Partial<autocannon.Options>) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    const tokens = who.tokens;
    let next = 0;
    const rotate = (request: autocannon.Request) => ({
      ...request,
      headers: { ...request.headers, authorization: `Bearer ${tokens[next++ % tokens.length]}` },
    });
    autocannon(
      { url, connections, duration: seconds, ...options, requests: [{ setupRequest: rotate }] },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}
const addRequest = {
  method: 'POST' as const,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(addBody(sender)),
};
const throughput: ThroughputRow[] = [];
for (const connections of runs('throughput') ? [1, 8, 32] : []) {
  const result = await load(`${host.url}/message/add-1.0`, connections, plan.throughputSeconds, addRequest);
  throughput.push({
    connections,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  });
  progress(
    `  ${connections} clients: ${fmt(result.requests.average)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
  );
}

// ---------------------------------------------------------------------------------------------
// 4. Scaling
progress(
  `4/7 scaling: seeding ${plan.small.toLocaleString('en')} and ${plan.large.toLocaleString('en')} messages with BatchWriteItem`,
);
const statuses = ['delivered', 'sent', 'waiting', 'bounced'];
const spanMs = 90 * 24 * 3600 * 1000;
const baseTime = Date.parse('2026-01-01T00:00:00Z');
async function seed(seedAccount: string, count: number): Promise<void> {
  const items = Array.from({ length: count }, (_, i) =>
    cloneItem(
      template,
      seedAccount,
      statuses[i % statuses.length] as string,
      new Date(baseTime + Math.floor((i / count) * spanMs)),
    ),
  );
  const t0 = performance.now();
  for (let i = 0; i < items.length; i += 10_000) {
    await batchWrite(items.slice(i, i + 10_000), 8);
    progress(
      `  seeded ${Math.min(i + 10_000, items.length).toLocaleString('en')}/${count.toLocaleString('en')} for ${seedAccount}`,
    );
  }
  progress(`  ${count} items in ${fmt((performance.now() - t0) / 1000)} s`);
}
const smallAccount = `${account}-s`;
const largeAccount = `${account}-l`;
await seed(smallAccount, runs('scaling') || runs('stats') ? plan.small : 0);
await seed(largeAccount, runs('scaling') || runs('stats') ? plan.large : 0);
const smallWho: Caller = await callerFor(smallAccount);
const largeWho: Caller = await callerFor(largeAccount);
const statsLines = !runs('stats')
  ? []
  : await statsSection(
      { account: smallAccount, who: smallWho, messages: plan.small },
      { account: largeAccount, who: largeWho, messages: plan.large },
      plan.statsRounds,
    );
// One status over 30 days in the middle of the 90: a typical support query, and a full page of 50
// for both accounts (≈ 83 matches with 1,000 stored), so both answers carry the same work.
const filter = {
  status: 'delivered',
  date_from: '2026-01-15T00:00:00+00:00',
  date_to: '2026-02-14T00:00:00+00:00',
  limit: 50,
};
const scaleTimes = { small: [] as number[], large: [] as number[], ratio: [] as number[] };
for (let round = -2; round < (runs('scaling') ? plan.scaleRounds : -2); round++) {
  const t0 = performance.now();
  const a = await call(smallWho, 'POST', '/message/query-1.0', { filters: filter });
  const t1 = performance.now();
  const b = await call(largeWho, 'POST', '/message/query-1.0', { filters: filter });
  const t2 = performance.now();
  if (a.status !== 200 || b.status !== 200)
    throw new Error(`query failed: ${JSON.stringify(a.body)} ${JSON.stringify(b.body)}`);
  if (round < 0) continue;
  scaleTimes.small.push(t1 - t0);
  scaleTimes.large.push(t2 - t1);
  scaleTimes.ratio.push((t2 - t1) / (t1 - t0));
}
const scanned = async (scaleAccount: string) =>
  (await listMessages(scaleAccount, filter as never, undefined)).scannedCount;
const scaling = {
  small: figure(scaleTimes.small),
  large: figure(scaleTimes.large),
  ratio: figure(scaleTimes.ratio),
  scannedSmall: await scanned(smallAccount),
  scannedLarge: await scanned(largeAccount),
};
progress(
  `  ${fmt(scaling.small.median)} ms vs ${fmt(scaling.large.median)} ms; items evaluated ${scaling.scannedSmall} vs ${scaling.scannedLarge}`,
);

// ---------------------------------------------------------------------------------------------
// 5. Delivery
progress('5/7 delivery: add → delivered through sender, DKIM and the SMTP sink, against raw nodemailer');
const edAccount = `${account}-ed`;
const edDomain = `${edAccount}.test`;
await registerDomain(edDomain, edAccount);
const edWho: Caller = await callerFor(edAccount);
const switched = await call(edWho, 'POST', '/domain/dkim/set-algorithm-1.0', {
  domain: edDomain,
  algorithm: 'ed25519-sha256',
});
if (switched.status !== 200) throw new Error(`set-algorithm failed: ${JSON.stringify(switched.body)}`);

async function deliverThroughService(deliveryWho: Caller, from: string, count: number): Promise<number> {
  const t0 = performance.now();
  const uuids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next++ < count) uuids.push(await addMessage(deliveryWho, from, 'immediate'));
    }),
  );
  const deadline = Date.now() + 240_000;
  for (;;) {
    const current = await statusesOf(uuids);
    const delivered = [...current.values()].filter((status) => status === 'delivered').length;
    if (delivered === count) break;
    if (Date.now() > deadline) throw new Error(`only ${delivered}/${count} delivered in 4 minutes`);
    await new Promise((done) => setTimeout(done, 50));
  }
  return count / ((performance.now() - t0) / 1000);
}
const smtpUrl = host.env.SMTP_URL as string;
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rawTransport = nodemailer.createTransport(smtpUrl, {
  dkim: {
    domainName: domain,
    keySelector: 'bench',
    privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  },
} as never);
async function deliverRaw(count: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  // Two at a time, like the local send-queue mapping's two pollers.
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next++ < count) {
        await rawTransport.sendMail({
          from: sender,
          to: 'Ada <ada@recipient.test>',
          subject: 'Benchmark',
          text: 'Hello from the benchmark.',
          messageId: `<${randomUUID()}@${domain}>`,
        });
      }
    }),
  );
  return count / ((performance.now() - t0) / 1000);
}
const deliveryRates = {
  rsa: [] as number[],
  ed: [] as number[],
  raw: [] as number[],
  rsaRatio: [] as number[],
  edRatio: [] as number[],
};
for (let run = 0; run < (runs('delivery') ? plan.deliveryRuns : 0); run++) {
  const rawRate = await deliverRaw(plan.deliveryMessages);
  const rsaRate = await deliverThroughService(who, sender, plan.deliveryMessages);
  const edRate = await deliverThroughService(edWho, `noreply@${edDomain}`, plan.deliveryMessages);
  deliveryRates.raw.push(rawRate);
  deliveryRates.rsa.push(rsaRate);
  deliveryRates.ed.push(edRate);
  deliveryRates.rsaRatio.push(rsaRate / rawRate);
  deliveryRates.edRatio.push(edRate / rawRate);
  progress(
    `  run ${run + 1}/${plan.deliveryRuns}: rsa ${fmt(rsaRate)}/s, ed25519 ${fmt(edRate)}/s, raw nodemailer ${fmt(rawRate)}/s`,
  );
}
rawTransport.close();

// ---------------------------------------------------------------------------------------------
// 6. Memory
progress('6/7 memory: each function bundle alone in a process, under load');
interface MemoryRow {
  id: string;
  load: string;
  rssMb: number;
}
function startFunction(id: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      join(import.meta.dirname, 'function-process.ts'),
      join(workDir, id, 'index.mjs'),
      id,
    ],
    {
      env: { ...process.env, ...host.env, LOG_FILE: join(host.dataDir, `bench-${id}.log`), NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout?.once('data', (chunk: Buffer) => {
      const { port } = JSON.parse(chunk.toString().split('\n')[0] as string) as { port: number };
      resolve({ child, url: `http://127.0.0.1:${port}` });
    });
  });
}
async function peakRss(url: string): Promise<number> {
  return Number(await (await fetch(`${url}/__rss`)).text()) / 1024 / 1024;
}
const memory: MemoryRow[] = [];
const victims = await Promise.all(Array.from({ length: 4 }, () => addMessage(who, sender)));
const httpLoads: Record<string, { path: string; method: 'GET' | 'POST'; body?: unknown; label: string }> = {
  health: { path: '/health', method: 'GET', label: 'GET' },
  'keepalive-status': { path: '/keepalive-1.0', method: 'GET', label: 'GET' },
  'keepalive-run': { path: '/keepalive-1.0', method: 'POST', label: 'POST' },
  openapi: { path: '/openapi.json', method: 'GET', label: 'GET' },
  'message-add': {
    path: '/message/add-1.0',
    method: 'POST',
    body: addBody(sender),
    label: 'add (manual-wait)',
  },
  'message-query': {
    path: '/message/query-1.0',
    method: 'POST',
    body: { filters: { limit: 50 } },
    label: 'filtered query',
  },
  'message-delete': {
    path: '/message/delete-1.0',
    method: 'POST',
    body: { message_uuids: victims },
    label: 'delete (already deleted after the first)',
  },
  'dkim-status': { path: `/domain/dkim/status-1.0?domain=${domain}`, method: 'GET', label: 'GET' },
  'dkim-set-algorithm': {
    path: '/domain/dkim/set-algorithm-1.0?dry_run=true',
    method: 'POST',
    body: { domain, algorithm: 'ed25519-sha256' },
    label: 'dry run',
  },
  'avatar-get': {
    path: `/avatar/get-1.0?email=${encodeURIComponent(`ada@${domain}`)}`,
    method: 'GET',
    label: 'GET',
  },
};
for (const id of runs('memory') ? functionIds : []) {
  progress(`  ${id}`);
  const { child, url } = await startFunction(id);
  let label = 'import only';
  try {
    const httpLoad = httpLoads[id];
    if (httpLoad !== undefined) {
      // One request at a time: a Lambda instance never runs two invocations at once.
      await load(`${url}${httpLoad.path}`, 1, plan.memorySeconds, {
        method: httpLoad.method,
        headers: { 'content-type': 'application/json' },
        body: httpLoad.body === undefined ? undefined : JSON.stringify(httpLoad.body),
      });
      label = `${httpLoad.label}, back to back for ${plan.memorySeconds} s`;
    } else if (id === 'sender') {
      // Waiting messages turned queued directly, then handed to this process as SQS batches of 10.
      const uuids = await Promise.all(
        Array.from({ length: plan.deliveryMessages }, () => addMessage(who, sender)),
      );
      for (const uuid of uuids) {
        await rawDynamo.send(
          new UpdateCommand({
            TableName: table(),
            Key: keys.message(uuid),
            UpdateExpression: 'SET #s = :q, gsi2pk = :l, gsi3pk = :w, gsi3sk = :ws',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: (() => {
              const index = messageIndexAttributes({
                message_uuid: uuid,
                account_id: account,
                created_at: new Date().toISOString(),
                status: 'queued',
                watch_at: firstWatchAt(Date.now()),
              });
              return { ':q': 'queued', ':l': index.gsi2pk, ':w': index.gsi3pk, ':ws': index.gsi3sk };
            })(),
          }),
        );
      }
      for (let i = 0; i < uuids.length; i += 10) {
        const records = uuids.slice(i, i + 10).map((uuid) => ({
          messageId: randomUUID(),
          receiptHandle: randomUUID(),
          body: JSON.stringify({ message_uuid: uuid }),
          attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()) },
          messageAttributes: {},
          md5OfBody: '',
          eventSource: 'aws:sqs',
          eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:bench',
          awsRegion: 'us-east-1',
        }));
        await fetch(`${url}/__invoke`, { method: 'POST', body: JSON.stringify({ Records: records }) });
      }
      label = `${uuids.length} messages in SQS batches of 10`;
    } else if (id === 'dispatcher') {
      for (let i = 0; i < 5; i++) {
        await fetch(`${url}/__invoke`, {
          method: 'POST',
          body: JSON.stringify({
            source: 'aws.events',
            'detail-type': 'Scheduled Event',
            time: new Date().toISOString(),
            detail: {},
          }),
        });
      }
      label = '5 scheduled runs';
    }
    memory.push({ id, load: label, rssMb: await peakRss(url) });
  } finally {
    child.kill();
  }
}

// 8. Inbound mail (bench/inbound.ts), measured before section 7 fills the table.
const inboundLines = runs('inbound') ? await inboundSection({ host, bundleDir: workDir, quick }) : [];
// 9. Batch sending and search filters (bench/batch.ts; its report follows section 8's)
const batchSection = runs('batch') ? await batchAndSearch(who, sender, batchPlan(quick)) : [];

// 15. Streams (bench/streams.ts): broadcast add and the one-click unsubscribe, side by side.
const streams = runs('streams') ? await streamsSection(who, sender, account, quick) : undefined;

// ---------------------------------------------------------------------------------------------
// 7. Scale and cost
progress(`7/7 scale and cost: ${plan.scaleMessages} messages per profile, every request counted`);
const scaleSection = [
  ...(await scaleAndCost(who, sender, plan.scaleMessages)),
  ...(await keyUsageWrites(host, account, existing, quick ? 50 : 300)),
];
if (streams !== undefined) scaleSection.push('', streams.unitsLine);

// 11. Web console (bench/console.ts): script size and Activity's first render, in headless Chromium.
progress('11 web console');
const consoleSection = runs('console') ? await consoleBench(host, quick) : [];
// 14. Domains (bench/domains.ts): add beside message add, the background check's reads.
const domainsResult = runs('domains')
  ? await domainsSection(who, sender, quick)
  : { lines: [], costLines: [] };
// 12. HTML to text (bench/html-to-text.ts): linear on a wide-table newsletter.
const htmlToTextLines = runs('html-to-text') ? await htmlToTextSection(quick) : [];
// 13. API keys against JWTs (bench/apikeys.ts): warm and first request, side by side.
progress('13 API keys against JWTs');
const apiKeyLines = runs('apikeys')
  ? await apiKeysSection(host, who, account, existing, plan.warmRounds)
  : [];
// 16. Open and click tracking (bench/tracking.ts): compose tracked vs untracked, click and open vs health.
progress('16 open and click tracking');
const tracking = runs('tracking') ? await trackingBench(who, sender, quick ? 10 : 40) : undefined;
// 17. SMTP submission (bench/smtp.ts): SMTP against the API side by side, the server's memory.
const smtpLines = runs('smtp') ? await smtpSection(host, account, sender, quick) : [];

await host.stop();

// ---------------------------------------------------------------------------------------------
// Report
const lines: string[] = [];
lines.push('## Results', '');
lines.push(
  `Mode: ${quick ? 'quick (`--quick`: fewer runs, 10,000 instead of 100,000 messages)' : 'full'}${only === undefined ? '' : `, only cold start and ${[...only].join(', ')} (\`--only\`)`}; ${plan.coldRuns} cold-start rounds, ${plan.warmRounds} warm rounds, ${plan.throughputSeconds} s per throughput step, ${plan.scaleRounds} scaling rounds, ${plan.deliveryRuns} × ${plan.deliveryMessages} messages per delivery run. Figures: median (min–max).`,
  '',
);
lines.push(...coldStartSection(cold));
lines.push('### 2. Warm overhead (through the local host vs raw SDK calls)', '');
lines.push(
  '| operation | raw SDK calls | service ms | raw ms | added ms | ratio | target ≤ 1.3 |',
  '|---|---|---:|---:|---:|---:|---|',
);
for (const row of warm) {
  const floor = row.rawCalls === 'none';
  lines.push(
    `| ${row.name} | ${row.rawCalls} | ${fmtFigure(row.service)} | ${floor ? '—' : fmtFigure(row.raw)} | ${fmt(row.service.median - (floor ? 0 : row.raw.median))} | ${floor ? '—' : fmtFigure(row.ratio, 2)} | ${floor ? '' : verdict(row.ratio.median <= 1.3)} |`,
  );
}
const warmOver = warm
  .filter((row) => row.rawCalls !== 'none' && row.ratio.median > 1.3)
  .map((row) => row.name);
checkTarget('warm-overhead', `over for: ${warmOver.join(', ') || 'none'}`, warmOver.length === 0);
lines.push('', ...templatesSection);
lines.push('', ...largeAddSection);
lines.push('### 3. Throughput (add, manual-wait)', '');
lines.push(
  '| clients | requests/s | p50 ms | p99 ms | non-2xx | errors |',
  '|---:|---:|---:|---:|---:|---:|',
);
for (const row of throughput)
  lines.push(
    `| ${row.connections} | ${fmt(row.rps)} | ${row.p50} | ${row.p99} | ${row.non2xx} | ${row.errors} |`,
  );
lines.push('');
lines.push('### 4. Scaling (filtered query: one status, 30 days, limit 50)', '');
lines.push(`| stored messages | latency ms | items evaluated (ScannedCount) |`, '|---:|---:|---:|');
lines.push(`| ${plan.small.toLocaleString('en')} | ${fmtFigure(scaling.small)} | ${scaling.scannedSmall} |`);
lines.push(`| ${plan.large.toLocaleString('en')} | ${fmtFigure(scaling.large)} | ${scaling.scannedLarge} |`);
lines.push('');
lines.push(
  `Latency ratio (large / small, per round): ${fmtFigure(scaling.ratio, 2)}; items evaluated ratio ${fmt(scaling.scannedLarge / Math.max(1, scaling.scannedSmall), 2)}. Target ≤ 1.2: ${checkTarget('query-scaling', fmtFigure(scaling.ratio, 2), scaling.ratio.median <= 1.2)}.`,
  '',
);
lines.push('### 5. Delivery (add → delivered, SMTP sink)', '');
lines.push('| path | messages/s | ratio to raw nodemailer | target ≥ 0.7 |', '|---|---:|---:|---|');
lines.push(
  `| raw nodemailer + DKIM rsa-sha256, 2 at a time | ${fmtFigure(figure(deliveryRates.raw))} | 1 | |`,
);
lines.push(
  `| service, rsa-sha256 | ${fmtFigure(figure(deliveryRates.rsa))} | ${fmtFigure(figure(deliveryRates.rsaRatio), 2)} | ${checkTarget('delivery-rsa', fmtFigure(figure(deliveryRates.rsaRatio), 2), figure(deliveryRates.rsaRatio).median >= 0.7)} |`,
);
lines.push(
  `| service, ed25519-sha256 | ${fmtFigure(figure(deliveryRates.ed))} | ${fmtFigure(figure(deliveryRates.edRatio), 2)} | ${checkTarget('delivery-ed25519', fmtFigure(figure(deliveryRates.edRatio), 2), figure(deliveryRates.edRatio).median >= 0.7)} |`,
);
lines.push('');
lines.push('### 6. Memory (peak RSS, one function bundle per process)', '');
lines.push('| function | load | peak RSS MB | target ≤ 128 MB |', '|---|---|---:|---|');
for (const row of memory)
  lines.push(`| ${row.id} | ${row.load} | ${fmt(row.rssMb)} | ${verdict(row.rssMb <= 128)} |`);
const heaviest = [...memory].sort((x, y) => y.rssMb - x.rssMb)[0];
if (heaviest !== undefined)
  checkTarget('memory-peak', `${heaviest.id}: ${fmt(heaviest.rssMb)} MB`, heaviest.rssMb <= 128);
lines.push('');
lines.push(
  scaleMarkers[0],
  ...scaleSection,
  ...domainsResult.costLines,
  ...(tracking?.costLines ?? []),
  scaleMarkers[1],
  '',
);
lines.push(...inboundLines, ...batchSection, ...statsLines);
lines.push(...consoleSection, '');
lines.push(...htmlToTextLines);
lines.push(...apiKeyLines);
lines.push(...domainsResult.lines);
lines.push(...(streams?.lines ?? []));
lines.push(...(tracking?.section ?? []));
lines.push(...smtpLines);
lines.push(`Benchmark wall time: ${fmt((Date.now() - started) / 1000, 0)} s.`, '');

const cpu = cpus();
const header = [
  '# Benchmarks',
  '',
  `Generated by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC.`,
  `Machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 0)} GB RAM, ${process.platform} ${process.arch}; Node ${process.version}.`,
  '',
];
const notes = readFileSync(join(import.meta.dirname, 'notes.md'), 'utf8');
const report = [...targetsTable(), ...lines].join('\n');
process.stdout.write(`\n${report}\n`);
const target =
  quick || only !== undefined
    ? join(tmpdir(), `svc-mail-benchmarks-${quick ? 'quick' : 'only'}.md`)
    : join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
// The webhook section is measured alone (npm run bench:webhooks, bench/webhooks.ts): keep it.
const previous = readFileSync(join(import.meta.dirname, '..', 'docs', 'benchmarks.md'), 'utf8');
const webhookSection =
  /<!-- webhooks:start -->(?:(?!<!-- webhooks:start -->)[\s\S])*?<!-- webhooks:end -->/.exec(previous)?.[0];
writeFileSync(
  target,
  `${header.join('\n')}\n${report}\n${notes}${webhookSection === undefined ? '' : `\n${webhookSection}\n`}`,
);
progress(`wrote ${target}`);
rmSync(workDir, { recursive: true, force: true });
if (host.ownHost) rmSync(host.dataDir, { recursive: true, force: true });
process.exit(0);
