import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { consoleDistDir, ensureConsoleBuilt } from '../console/build.ts';
import { launchChromium, signIn } from '../test/support/chromium.ts';
import { type BenchHost, benchHost } from './host.ts';
import { addMessage, batchWrite, cloneItem, storedItem } from './service.ts';
import { type Figure, figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * The web console's figures (section 11 of docs/benchmarks.md), in headless Chromium against the
 * local host: the size of all its JavaScript gzipped (target ≤ 150 KB), and the first render of
 * Activity for an account with 100,000 stored messages (10,000 with --quick) against the query
 * request it makes (target ≤ 1.5 ×). `npm run bench` runs it (section 11); `npm run bench:console`
 * runs it alone and writes its section in place.
 */
export const consoleMarkers = ['<!-- console:start -->', '<!-- console:end -->'] as const;

interface RenderSample {
  /** Activity's first render to its list in the DOM (performance marks set by the page). */
  render: number;
  /** The query request it made, from request start to the end of the response (resource timing). */
  query: number;
}

function scriptSizes(): { raw: number; gzip: number; files: number } {
  const assets = join(consoleDistDir, 'assets');
  const scripts = readdirSync(assets).filter((name) => name.endsWith('.js'));
  let raw = 0;
  let gzip = 0;
  for (const name of scripts) {
    const content = readFileSync(join(assets, name));
    raw += content.length;
    gzip += gzipSync(content, { level: 9 }).length;
  }
  return { raw, gzip, files: scripts.length };
}

/** Stores `count` messages for `account` with BatchWriteItem, copies of one accepted message. */
async function seed(host: BenchHost, account: string, count: number): Promise<void> {
  const seeder = { url: host.url, tokens: [await host.mint('bench-seed')] };
  const uuid = await addMessage(seeder, 'bench@bench-seed.test');
  const template = await storedItem(uuid);
  const spanMs = 90 * 24 * 3600 * 1000;
  const end = Date.now();
  const statuses = ['delivered', 'sent', 'waiting', 'bounced'];
  for (let start = 0; start < count; start += 10_000) {
    const items = Array.from({ length: Math.min(10_000, count - start) }, (_, offset) => {
      const index = start + offset;
      return cloneItem(
        template,
        account,
        statuses[index % statuses.length] as string,
        new Date(end - spanMs + Math.floor((index / count) * spanMs)),
      );
    });
    await batchWrite(items, 8);
    progress(`  seeded ${(start + items.length).toLocaleString('en')}/${count.toLocaleString('en')}`);
  }
}

const readMarks = `(() => {
  const start = performance.getEntriesByName('activity:start')[0];
  const rendered = performance.getEntriesByName('activity:rendered')[0];
  const query = performance.getEntriesByType('resource').find((entry) => entry.name.endsWith('/message/query-1.0'));
  if (!start || !rendered || !query) return null;
  return { render: rendered.startTime - start.startTime, query: query.responseEnd - query.startTime };
})()`;

export async function consoleBench(host: BenchHost, quick: boolean): Promise<string[]> {
  await ensureConsoleBuilt(progress);
  const size = scriptSizes();
  progress(`  console JavaScript: ${fmt(size.gzip / 1024)} KB gzipped (${size.files} files)`);

  const stored = quick ? 10_000 : 100_000;
  const rounds = quick ? 3 : 15;
  const account = `bench-console-${randomUUID().slice(0, 8)}`;
  progress(`  seeding ${stored.toLocaleString('en')} messages for ${account}`);
  await seed(host, account, stored);

  const browser = await launchChromium();
  const samples: RenderSample[] = [];
  try {
    const page = browser.context.pages()[0] ?? (await browser.context.newPage());
    const consoleUrl = `${host.url}/console/`;
    await signIn({ page, consoleUrl }, { account });
    // Each round loads the page again (tokens live in memory: a silent sign-in each time) and
    // reads the marks of that load; two rounds first to warm the host and the browser cache.
    for (let round = -2; round < rounds; round++) {
      await page.reload();
      let sample: RenderSample | null = null;
      const deadline = Date.now() + 60_000;
      while (sample === null) {
        if (Date.now() > deadline) throw new Error('Activity did not render within 60 s');
        await new Promise((resolve) => setTimeout(resolve, 50));
        sample = (await page.evaluate(readMarks).catch(() => null)) as RenderSample | null;
      }
      const rows = await page.locator('table.list tbody tr').count();
      if (rows !== 50) throw new Error(`Activity showed ${rows} messages, expected a page of 50`);
      if (round >= 0) samples.push(sample);
    }
  } finally {
    await browser.close();
  }
  const render: Figure = figure(samples.map((sample) => sample.render));
  const query: Figure = figure(samples.map((sample) => sample.query));
  const ratio: Figure = figure(samples.map((sample) => sample.render / sample.query));
  progress(
    `  Activity: render ${fmt(render.median)} ms, query ${fmt(query.median)} ms, ratio ${fmt(ratio.median, 2)}`,
  );

  return [
    consoleMarkers[0],
    '### 11. Web console (headless Chromium)',
    '',
    `Measured by \`bench/console.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (${quick ? '`--quick`: ' : ''}${stored.toLocaleString('en')} stored messages, ${rounds} page loads); machine: ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, ${fmt(totalmem() / 1024 ** 3, 0)} GB RAM; Node ${process.version}; Debian's Chromium. Figures: median (min–max).`,
    '',
    '| figure | value | target | |',
    '|---|---:|---|---|',
    `| all console JavaScript, gzipped (${size.files} files, ${fmt(size.raw / 1024)} KB raw) | ${fmt(size.gzip / 1024)} KB | ≤ 150 KB | ${checkTarget('console-size', `${fmt(size.gzip / 1024)} KB`, size.gzip <= 150 * 1024)} |`,
    `| Activity: first render (page's first render → first page of 50 in the DOM) | ${fmtFigure(render)} ms | | |`,
    `| Activity: its query request (request start → response end) | ${fmtFigure(query)} ms | | |`,
    `| first render ÷ query, per load | ${fmtFigure(ratio, 2)} | ≤ 1.5 | ${checkTarget('console-render', fmtFigure(ratio, 2), ratio.median <= 1.5)} |`,
    '',
    consoleMarkers[1],
  ];
}

/** Puts the section between its markers in `document`, or before the notes, or at the end. */
export function withConsoleSection(document: string, section: readonly string[]): string {
  const text = section.join('\n');
  const start = document.indexOf(consoleMarkers[0]);
  const end = document.indexOf(consoleMarkers[1]);
  if (start !== -1 && end !== -1)
    return `${document.slice(0, start)}${text}${document.slice(end + consoleMarkers[1].length)}`;
  const notesAt = document.indexOf('\n## How to run');
  return notesAt === -1
    ? `${document.trimEnd()}\n\n${text}\n`
    : `${document.slice(0, notesAt).trimEnd()}\n\n${text}\n${document.slice(notesAt)}`;
}

if (import.meta.main) {
  const quick = process.argv.includes('--quick');
  const host = await benchHost();
  const section = await consoleBench(host, quick);
  await host.stop();
  process.stdout.write(`\n${section.join('\n')}\n`);
  const docs = join(import.meta.dirname, '..', 'docs', 'benchmarks.md');
  const target = quick ? join(tmpdir(), 'svc-mail-benchmarks-console.md') : docs;
  writeFileSync(target, withConsoleSection(quick ? '' : readFileSync(docs, 'utf8'), section));
  progress(`wrote ${target}`);
  process.exit(0);
}
