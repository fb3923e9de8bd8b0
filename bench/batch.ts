import './environment.ts';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { registerDomain } from '../shared/domains/registry.ts';
import { listMessages } from '../shared/messages/query.ts';
import { searchEntriesOf } from '../shared/messages/store/message-index.ts';
import { batchWrite, type Caller, call, cloneItem, storedItem } from './service.ts';
import { figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * Section 9 of `npm run bench` (docs/benchmarks.md), also runnable alone: `npm run bench:batch
 * [-- --quick]` writes it between the batch markers of docs/benchmarks.md.
 * - Batch acceptance: 500 text messages in one POST /message/batch-1.0 against the same 500 sent
 *   with add by 8 parallel clients, side by side in each round (target: ≤ 0.5 × the time).
 * - Search scaling: a tag-filtered and a recipient-filtered page (30 days, limit 50) on an account
 *   with 1,000 messages and one with 100,000 (10,000 with --quick): the index entries DynamoDB
 *   evaluates (target: ≤ 1.2 × at the larger size) and the latency.
 * The batch's cost per million messages and the write units of tags and metadata are in section 7
 * (bench/scale-cost.ts), which meters whole lifecycles.
 */
export interface BatchPlan {
  rounds: number;
  messages: number;
  small: number;
  large: number;
  searchWindows: number;
}

export const batchPlan = (quick: boolean): BatchPlan =>
  quick
    ? { rounds: 1, messages: 100, small: 1_000, large: 10_000, searchWindows: 5 }
    : { rounds: 3, messages: 500, small: 1_000, large: 100_000, searchWindows: 20 };

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

const markers = ['<!-- batch:start -->', '<!-- batch:end -->'] as const;

const message = (sender: string, index: number) => ({
  message_sender: sender,
  to: [`customer-${index}@recipient.test`],
  subject: `Receipt ${index}`,
  content: { kind: 'text_only', text: `Thank you for your order ${index}.` },
  scheduling: { mode: 'manual-wait' },
});

/** One round: the same messages through add (8 clients) and through one batch, in turn. */
async function acceptanceRound(who: Caller, sender: string, count: number) {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        const index = next++;
        const response = await call(who, 'POST', '/message/add-1.0', message(sender, index));
        if (response.status !== 200) throw new Error(`add failed: ${JSON.stringify(response.body)}`);
      }
    }),
  );
  const addMs = performance.now() - t0;
  const t1 = performance.now();
  const response = await call(who, 'POST', '/message/batch-1.0', {
    messages: Array.from({ length: count }, (_, index) => message(sender, index)),
  });
  const batchMs = performance.now() - t1;
  if (response.status !== 200 || response.body.data.accepted !== count)
    throw new Error(`batch failed: ${JSON.stringify(response.body).slice(0, 300)}`);
  return { addMs, batchMs };
}

const categories = ['receipt', 'password-reset', 'welcome', 'invoice'];
const customers = 5;
const spanMs = 90 * 24 * 3600 * 1000;
const baseTime = Date.parse('2026-01-01T00:00:00Z');

/**
 * `count` delivered messages over 90 days, each with one of 4 tags and one of 5 recipients, and
 * their search entries: the index a tag or recipient filter reads holds a quarter or a fifth of them.
 */
async function seed(template: Record<string, unknown>, account: string, count: number): Promise<void> {
  for (let start = 0; start < count; start += 10_000) {
    const items: Array<Record<string, unknown>> = [];
    for (let i = start; i < Math.min(count, start + 10_000); i++) {
      const clone = cloneItem(
        template,
        account,
        'delivered',
        new Date(baseTime + Math.floor((i / count) * spanMs)),
      );
      const email = `customer-${i % customers}@recipient.test`;
      clone.to = [{ email }];
      clone.recipients = [{ email, kind: 'to', status: 'delivered', updated_at: clone.created_at }];
      clone.tags = [{ name: 'category', value: categories[i % categories.length] }];
      items.push(clone, ...searchEntriesOf(clone as never));
    }
    await batchWrite(items, 8);
    progress(
      `  seeded ${Math.min(count, start + 10_000).toLocaleString('en')}/${count.toLocaleString('en')} for ${account}`,
    );
  }
}

export async function batchAndSearch(who: Caller, sender: string, plan: BatchPlan): Promise<string[]> {
  progress(`9 batch: ${plan.messages} messages with add (8 clients) and in one batch, ${plan.rounds} rounds`);
  await acceptanceRound(who, sender, 20);
  const rounds: Array<{ addMs: number; batchMs: number }> = [];
  for (let round = 0; round < plan.rounds; round++) {
    const result = await acceptanceRound(who, sender, plan.messages);
    rounds.push(result);
    progress(`  add ${fmt(result.addMs, 0)} ms, batch ${fmt(result.batchMs, 0)} ms`);
  }
  const addTime = figure(rounds.map((round) => round.addMs));
  const batchTime = figure(rounds.map((round) => round.batchMs));
  const ratio = figure(rounds.map((round) => round.batchMs / round.addMs));

  progress(
    `9 search: seeding ${plan.small.toLocaleString('en')} and ${plan.large.toLocaleString('en')} tagged messages`,
  );
  const template = await storedItem(
    (await call(who, 'POST', '/message/add-1.0', message(sender, 0))).body.data.message_uuid,
  );
  const small = `search-${randomUUID().slice(0, 8)}-s`;
  const large = `search-${randomUUID().slice(0, 8)}-l`;
  await seed(template, small, plan.small);
  await seed(template, large, plan.large);
  // Every page evaluates the page plus what the streams read ahead, which depends on how the
  // page's messages fall on the shards: a different amount for each page. So each filter is measured
  // on the same 20 pages at both sizes (30-day windows starting 2 days apart), and the mean compared.
  const day = 24 * 3600 * 1000;
  const windows = Array.from({ length: plan.searchWindows }, (_, index) => {
    const from = baseTime + (10 + 2 * index) * day;
    return {
      date_from: new Date(from).toISOString().replace('Z', '+00:00'),
      date_to: new Date(from + 30 * day).toISOString().replace('Z', '+00:00'),
      limit: 50,
    };
  });
  const filters: Array<{ name: string; search: Record<string, unknown> }> = [
    { name: 'tag', search: { tag: { name: 'category', value: 'password-reset' } } },
    // As the schema leaves it: a parsed address (the query lower-cases it).
    { name: 'recipient', search: { recipient: { email: 'Customer-3@recipient.test' } } },
    { name: 'tag + status', search: { tag: { name: 'category', value: 'receipt' }, status: 'delivered' } },
  ];
  const rows: string[] = [];
  let worst = 0;
  for (const { name, search } of filters) {
    const measure = async (account: string) => {
      const evaluated: number[] = [];
      const times: number[] = [];
      await listMessages(account, { ...windows[0], ...search } as never, undefined);
      for (const window of windows) {
        const t0 = performance.now();
        const page = await listMessages(account, { ...window, ...search } as never, undefined);
        times.push(performance.now() - t0);
        if (page.count !== window.limit) throw new Error(`${name}: a page of ${page.count}, not a full page`);
        evaluated.push(page.scannedCount);
      }
      return { evaluated: figure(evaluated), mean: mean(evaluated), time: figure(times) };
    };
    const atSmall = await measure(small);
    const atLarge = await measure(large);
    const evaluatedRatio = atLarge.mean / atSmall.mean;
    if (name !== 'tag + status') worst = Math.max(worst, evaluatedRatio);
    rows.push(
      `| ${name} | ${fmt(atSmall.mean, 1)} (${atSmall.evaluated.min}–${atSmall.evaluated.max}) | ${fmt(atLarge.mean, 1)} (${atLarge.evaluated.min}–${atLarge.evaluated.max}) | ${fmt(evaluatedRatio, 2)} | ${fmtFigure(atSmall.time)} | ${fmtFigure(atLarge.time)} |`,
    );
    progress(`  ${name}: evaluated ${fmt(atSmall.mean)} vs ${fmt(atLarge.mean)} on average`);
  }

  return [
    markers[0],
    '### 9. Batch sending and search filters',
    '',
    `Batch acceptance: ${plan.messages} text messages (\`manual-wait\`, one recipient each) sent with add by 8 parallel clients, then the same ${plan.messages} in one \`POST /message/batch-1.0\`, in turn, ${plan.rounds} rounds (after a warm-up round of 20). Wall time from the first request to the last answer.`,
    '',
    '| path | ms for the messages | ratio (batch / add) | target ≤ 0.5 |',
    '|---|---:|---:|---|',
    `| add, 8 parallel clients | ${fmtFigure(addTime, 0)} | | |`,
    `| one batch | ${fmtFigure(batchTime, 0)} | ${fmtFigure(ratio, 2)} | ${checkTarget('batch-time', fmtFigure(ratio, 2), ratio.median <= 0.5)} |`,
    '',
    `Search filters: pages of 50 over 30 days (of 90) on an account with ${plan.small.toLocaleString('en')} messages and one with ${plan.large.toLocaleString('en')} (each message has one of 4 tags and one of 5 recipients, and its search entries), the same ${plan.searchWindows} windows (starting 2 days apart) at both sizes, every page full. Items evaluated are the entries DynamoDB read for a page (\`ScannedCount\` over the 4 shard streams): the page plus the streams' read-ahead, which varies with how each page falls on the shards, so the mean over the windows is compared (min–max beside it). Latency is the query service (\`listMessages\`) in-process, median (min–max) over the windows.`,
    '',
    `| filter | evaluated at ${plan.small.toLocaleString('en')}: mean (min–max) | at ${plan.large.toLocaleString('en')} | ratio of the means | ms at ${plan.small.toLocaleString('en')} | ms at ${plan.large.toLocaleString('en')} |`,
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `Target: a tag- or recipient-filtered page evaluates ≤ 1.2 × the items at the larger size: worst ratio ${fmt(worst, 2)}, ${checkTarget('batch-filter-scaling', fmt(worst, 2), worst <= 1.2)}. With a status as well, the query reads the entries' items to keep those in that status, so its work follows how many of the term's messages have it (here all). The batch's cost per million messages and the write units of tags and metadata are in section 7.`,
    markers[1],
    '',
  ];
}

/** `npm run bench:batch [-- --quick]`: this section alone, on its own local host. */
async function runAlone(): Promise<void> {
  const { benchHost } = await import('./host.ts');
  const quick = process.argv.includes('--quick');
  const host = await benchHost();
  const account = `bench-${randomUUID().slice(0, 8)}`;
  const domain = `${account}.test`;
  await registerDomain(domain, account);
  const who: Caller = {
    url: host.url,
    tokens: await Promise.all(Array.from({ length: 8 }, () => host.mint(account))),
  };
  const section = await batchAndSearch(who, `noreply@${domain}`, batchPlan(quick));
  await host.stop();
  const cpu = cpus();
  const text = [
    section[0],
    `Section 9 run alone (\`npm run bench:batch${quick ? ' -- --quick' : ''}\`) on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC; machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 0)} GB RAM; Node ${process.version}.`,
    '',
    ...section.slice(1),
  ].join('\n');
  process.stdout.write(`\n${text}\n`);
  const target = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
  const current = readFileSync(target, 'utf8');
  const pattern = /<!-- batch:start -->[\s\S]*?<!-- batch:end -->\n?/;
  const notesAt = current.indexOf('\n## How to run');
  const updated = pattern.test(current)
    ? current.replace(pattern, text)
    : `${current.slice(0, notesAt).trimEnd()}\n\n${text}${current.slice(notesAt)}`;
  if (!quick) writeFileSync(target, updated);
  progress(quick ? 'quick run: docs/benchmarks.md left alone' : `wrote section 9 of ${target}`);
  if (host.ownHost) rmSync(host.dataDir, { recursive: true, force: true });
  process.exit(0);
}

if (process.argv[1]?.endsWith('bench/batch.ts')) await runAlone();
