import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { runBackgroundChecks } from '../shared/domains/background.ts';
import { refillKeyPool } from '../shared/domains/dkim/key-pool.ts';
import { takePoolKey } from '../shared/domains/dkim/store/key-pool.ts';
import { dueEntry } from '../shared/domains/store/domain-checks.ts';
import * as tableGateway from '../shared/platform/table/gateway.ts';
import { keys } from '../shared/platform/table/keys.ts';
import { addBody, type Caller, call } from './service.ts';
import { type Figure, figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * `npm run bench` section 14, self-service domains (docs/domains.md):
 * - `POST /domain/add-1.0` beside `POST /message/add-1.0`, alternating, one at a time: with the
 *   DKIM key pool warm (the RSA-2048 key made ahead, taken in add's one transaction, its ciphertext kept;
 *   target ≤ 2 ×), and with the pool empty (the key generated on the request), reported as it is.
 *   The pool's refill is timed too: that generation happens off the request path.
 * - the background check's reads: a pass over the same number of due domains with 100 and with
 *   10,000 domains held; target ≤ 1.1 ×. The pass's DNS answers come from a lookup that answers at
 *   once (what is measured is what the pass reads from the table, not the resolver).
 * - write units per domain per day of the background checks, for section 7.
 */
const dueCount = 10;
const noDns = async () => ({ kind: 'no-name' as const });

async function timed(run: () => Promise<{ status: number; body: unknown }>): Promise<number> {
  const start = performance.now();
  const response = await run();
  if (response.status !== 200) throw new Error(`bench call failed: ${JSON.stringify(response.body)}`);
  return performance.now() - start;
}

/** Domain items written straight to the table (as add leaves them): `due` of them due now. */
async function seedDomains(prefix: string, count: number, due: number): Promise<void> {
  const now = Date.now();
  const items = Array.from({ length: count }, (_, index) => {
    const domain = `${prefix}-${index}.bench.test`;
    const next = new Date(index < due ? now - 60_000 : now + 3_600_000 + index).toISOString();
    return {
      ...keys.domain(domain),
      domain,
      account_id: `${prefix}-account`,
      created_at: new Date(now - 600_000).toISOString(),
      gsi1pk: keys.domainsOfAccount(`${prefix}-account`),
      gsi1sk: domain,
      origin: 'api',
      sending_ready: false,
      status: 'pending',
      mail_from: `bounce.${domain}`,
      next_check_at: next,
      records: {},
      ...dueEntry(domain, next),
    };
  });
  for (let start = 0; start < items.length; start += 25) {
    let requests: tableGateway.WriteRequest[] = items
      .slice(start, start + 25)
      .map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) requests = (await tableGateway.batchWrite(requests)).unprocessed;
  }
}

/** The size in write units of one check's write: the domain item after a check, plus its due entry. */
function unitsPerCheck(): number {
  const domain = 'shop.example.com';
  const at = new Date().toISOString();
  const check = { status: 'verified', checked_at: at };
  const item = {
    ...keys.domain(domain),
    domain,
    account_id: 'account-0123456789',
    created_at: at,
    gsi1pk: keys.domainsOfAccount('account-0123456789'),
    gsi1sk: domain,
    origin: 'api',
    sending_ready: true,
    status: 'verified',
    mail_from: `bounce.${domain}`,
    checked_at: at,
    next_check_at: at,
    active_selector: 'rsa-20261122-3f9a1c',
    records: { dkim: check, mail_from_mx: check, mail_from_spf: check, dmarc: check },
    ...dueEntry(domain, at),
  };
  const bytes = JSON.stringify(marshall(item)).length;
  // The item's write, plus the keys-only work index: its old due entry out, the new one in.
  return Math.ceil(bytes / 1024) + 2;
}

/** Takes every key out of the DKIM key pool, so the next adds find it empty. */
async function drainKeyPool(): Promise<void> {
  for (let key = await takePoolKey(); key !== undefined; key = await takePoolKey()) {
    // Each key taken is dropped.
  }
}

/** Domain adds beside message adds, alternating: the times of each and the ratio per round. */
async function addRounds(who: Caller, sender: string, rounds: number) {
  const domainMs: number[] = [];
  const messageMs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    domainMs.push(
      await timed(() =>
        call(who, 'POST', '/domain/add-1.0', { domain: `add-${randomUUID().slice(0, 8)}.bench.test` }),
      ),
    );
    messageMs.push(await timed(() => call(who, 'POST', '/message/add-1.0', addBody(sender, 'manual-wait'))));
  }
  const ratios = figure(domainMs.map((ms, index) => ms / (messageMs[index] ?? Number.NaN)));
  return { domain: figure(domainMs), message: figure(messageMs), ratios };
}

export async function domainsSection(
  who: Caller,
  sender: string,
  quick: boolean,
): Promise<{ lines: string[]; costLines: string[] }> {
  const rounds = quick ? 5 : 20;
  progress(`14 domains: filling the DKIM key pool with ${rounds} keys`);
  await drainKeyPool();
  const refillStart = performance.now();
  const refill = await refillKeyPool(rounds);
  const refillMs = performance.now() - refillStart;
  progress(`14 domains: ${rounds} domain adds (warm pool) beside ${rounds} message adds`);
  const warm = await addRounds(who, sender, rounds);
  await drainKeyPool();
  progress(`14 domains: ${rounds} domain adds (empty pool) beside ${rounds} message adds`);
  const empty = await addRounds(who, sender, rounds);
  const ratios: Figure = warm.ratios;

  progress('14 domains: background pass at 100 and 10,000 domains, 10 due');
  const prefix = `bg-${randomUUID().slice(0, 6)}`;
  await seedDomains(`${prefix}-s`, 100, dueCount);
  const small = await runBackgroundChecks({ lookup: noDns });
  await seedDomains(`${prefix}-l`, 10_000, dueCount);
  const large = await runBackgroundChecks({ lookup: noDns });
  const readRatio = large.itemsRead / Math.max(1, small.itemsRead);

  const units = unitsPerCheck();
  const verifiedPerDay = units;
  const newPerDay = (12 + 23) * units;
  const monthlyWriteUnits = 1_000 * verifiedPerDay * 30;
  // On-demand prices of us-east-1: $1.25 per million write request units, $0.25 per million read.
  const monthlyCost = (monthlyWriteUnits * 1.25 + 1_000 * 30 * 1.5 * 0.25) / 1_000_000;
  const costLines = [
    `Background domain checks (docs/domains.md, "Schedule"): ${units} write units per check (the domain item and its due entry on the keys-only work index), so ${verifiedPerDay} write units per verified domain per day and ${newPerDay} on a new domain's first day (5-minute checks in its first hour, then hourly). 1,000 verified domains: ${monthlyWriteUnits.toLocaleString('en')} write units a month, about $${fmt(monthlyCost, 2)} a month on demand with their reads.`,
    '',
  ];
  const lines = [
    '### 14. Domains',
    '',
    '| operation | ms | target |',
    '|---|---:|---|',
    `| POST /domain/add-1.0, key pool warm (RSA-2048 key taken from the pool in add's transaction, its ciphertext kept) | ${fmtFigure(warm.domain)} | |`,
    `| POST /message/add-1.0, beside it | ${fmtFigure(warm.message)} | |`,
    `| ratio, per round | ${fmtFigure(ratios, 2)} | ${checkTarget('domain-add', fmtFigure(ratios, 2), ratios.median <= 2)} |`,
    `| POST /domain/add-1.0, key pool empty (RSA-2048 key generated on the request) | ${fmtFigure(empty.domain)} | |`,
    `| POST /message/add-1.0, beside it | ${fmtFigure(empty.message)} | |`,
    `| ratio, per round, pool empty | ${fmtFigure(empty.ratios, 2)} | none: the schedule refills the pool every minute |`,
    '',
    `The pool's refill (the \`dkim-key-pool\` schedule, off the request path) made ${refill.added} keys in ${fmt(refillMs, 0)} ms (${fmt(refillMs / Math.max(1, refill.added), 0)} ms a key).`,
    '',
    `Background pass with ${dueCount} domains due: ${small.itemsRead} items read at 100 domains, ${large.itemsRead} at 10,000 (${fmt(readRatio, 2)} ×; target ≤ 1.1: ${checkTarget('domain-check-scaling', fmt(readRatio, 2), readRatio <= 1.1)}); checked ${small.checked} and ${large.checked}.`,
    '',
  ];
  return { lines, costLines };
}
