import { sealIndexedLinkTokens, sealLinkToken } from '../shared/platform/tokens/link-tokens.ts';
import { encodeOpen } from '../shared/tracking/model/token-payload.ts';
import { childJson } from './child-json.ts';
import { startMeter, stopMeter } from './meter.ts';
import { prices } from './scale-cost.ts';
import { type Caller, call, storedItem } from './service.ts';
import type { ClientPlan } from './side-by-side-client.ts';
import { type Figure, fmt, fmtFigure, progress, sideBySide } from './stats.ts';
import { checkTarget } from './targets.ts';
import { linkCount, newsletter } from './tracking-compose.ts';

/**
 * Open and click tracking (docs/tracking.md), side by side in one run:
 * - composing and DKIM-signing a 50 KB HTML message with 100 links, tracked (opens and clicks: 100
 *   click tokens, the rewrite, the pixel) against the same message untracked, in a process of its
 *   own as the sender's instance (bench/tracking-compose.ts);
 * - through the local gateway, from a client in a process of its own as a mail client is
 *   (bench/side-by-side-client.ts), each beside `GET /health` in the same round: an open (the GIF at
 *   once; the token, the message read and the write after the answer), a click of a message this
 *   instance has not seen (token, message read, HTML part read, 302; the write after the answer)
 *   and a repeated click of one message (its links held by the instance: no read before the 302);
 * - one GetItem of the message item from the bench process beside `GET /health`, so the share of
 *   the first click's reads is visible (no public route does just one GetItem).
 */
async function get(url: string): Promise<number> {
  const response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': userAgent } });
  await response.arrayBuffer();
  return response.status;
}

/** Section 16's lines, and the tracking lines of section 7 (write units per hit, cost per million). */
export async function trackingBench(
  who: Caller,
  sender: string,
  rounds: number,
): Promise<{ section: string[]; costLines: string[] }> {
  progress('tracking: compose tracked vs untracked; click and open vs GET /health');
  const html = newsletter();
  const compose = await childJson<SideBySide & { htmlBytes: number }>('tracking-compose.ts', [
    String(rounds),
  ]);

  // Stored messages whose links the click route reads (held: the routes need no sent mail): one
  // for the repeated click and the open, and one per round (and warm-up) for the first click.
  const uuid = await storedMessage(who, sender, html);
  const fresh: string[] = [];
  for (let index = 0; index < rounds + sideBySideWarmUps; index++)
    fresh.push(await storedMessage(who, sender, html));
  // Link 57 of recipient 0's copy, as the composer seals it.
  const clickUrl = async (messageUuid: string) =>
    `${who.url}/t/c/${(await sealIndexedLinkTokens('click', encodeOpen({ messageUuid, recipient: 0 }), 58))[57]}`;
  const click = await clickUrl(uuid);
  const firstClicks = await Promise.all(fresh.map(clickUrl));
  const open = `${who.url}/t/o/${await sealLinkToken('open', encodeOpen({ messageUuid: uuid, recipient: 0 }), { stable: true })}`;
  if ((await get(click)) !== 302 || (await get(open)) !== 200)
    throw new Error('tracking bench: the routes did not answer');
  const settle = () => get(`${who.url}/_local/settled`);
  const units = await unitsPerHit(click, open, 'TRACK#click#0', 'TRACK#open#0', rounds, settle);
  const health = `${who.url}/health`;
  // A Lambda instance takes its next request only once the handler returns (the hit recorded);
  // the local host is one process, so each hit's recording is let finish, untimed, before /health.
  const client = (a: string[]) =>
    childJson<SideBySide>('side-by-side-client.ts', [
      JSON.stringify({
        a,
        b: health,
        between: `${who.url}/_local/settled`,
        rounds,
        userAgent,
      } satisfies ClientPlan),
    ]);
  const firsts = await client(firstClicks);
  const clicks = await client([click]);
  const opens = await client([open]);
  const reads = await sideBySide(
    rounds,
    () => storedItem(uuid),
    () => get(health),
  );
  await settle();
  progress(
    `  compose tracked ${fmt(compose.a.median)} ms vs ${fmt(compose.b.median)} ms; click ${fmt(clicks.a.median)} ms (first of its message ${fmt(firsts.a.median)} ms), open ${fmt(opens.a.median)} ms vs health ${fmt(clicks.b.median)} ms`,
  );
  const section = [
    '### 16. Open and click tracking',
    '',
    `Compose and DKIM-sign (rsa-sha256) one ${fmt(compose.htmlBytes / 1024, 0)} KB HTML message with ${linkCount} links, tracked (opens and clicks) and untracked, in a Node process of its own as the sender composes in its instance (after 20 compositions of each: V8 optimises the parser and the MIME code over an instance's first messages); then the tracking routes through the local gateway, from a client in a process of its own as a recipient's mail client is, each timed beside \`GET /health\` in the same round (the hit's recording after the answer let finish, untimed, before \`GET /health\`: on AWS it holds its own instance, not the next request's). Both routes answer first and record the hit after the answer (docs/decisions/0056-answer-first-then-record.md): the open reads nothing before its GIF; a click reads the message's links before its 302, unless the instance holds them from an earlier click of the same message. Medians (min–max) in ms over ${rounds} rounds. Write units per hit and the cost per million tracked messages: section 7 and docs/tracking.md.`,
    '',
    '| operation | ms | beside | ms | ratio | target |',
    '|---|---|---|---|---|---|',
    `| compose tracked | ${fmtFigure(compose.a)} | compose untracked | ${fmtFigure(compose.b)} | ${fmtFigure(compose.ratio, 2)} | ≤ 1.3: ${checkTarget('tracking-compose', fmtFigure(compose.ratio, 2), compose.ratio.median <= 1.3)} |`,
    `| click (302), repeated: links held | ${fmtFigure(clicks.a)} | GET /health | ${fmtFigure(clicks.b)} | ${fmtFigure(clicks.ratio, 2)} | ≤ 1.3: ${checkTarget('tracking-click', fmtFigure(clicks.ratio, 2), clicks.ratio.median <= 1.3)} |`,
    `| click (302), first of its message: message and HTML part read | ${fmtFigure(firsts.a)} | GET /health | ${fmtFigure(firsts.b)} | ${fmtFigure(firsts.ratio, 2)} | none: its reads are on the path (below) |`,
    `| open (GIF) | ${fmtFigure(opens.a)} | GET /health | ${fmtFigure(opens.b)} | ${fmtFigure(opens.ratio, 2)} | ≤ 1.3: ${checkTarget('tracking-open', fmtFigure(opens.ratio, 2), opens.ratio.median <= 1.3)} |`,
    `| one GetItem of the message item (bench process to DynamoDB Local) | ${fmtFigure(reads.a)} | GET /health | ${fmtFigure(reads.b)} | ${fmtFigure(reads.ratio, 2)} | the share of one read |`,
    '',
    `The first click of a message on an instance reads the message item and its HTML part (content item or S3 object) before it can answer, because the target comes from the stored message, never from the token: here ${fmt(firsts.a.median - firsts.b.median)} ms over \`GET /health\`, against ${fmt(reads.a.median)} ms for one GetItem of the message item alone. Later clicks of the same message on that instance answer from the links it holds (${fmtFigure(clicks.ratio, 2)} × \`GET /health\`).`,
    '',
  ];
  const costLines = [
    '**Open and click tracking** (measured in section 16):',
    '',
    `Write units per hit, measured (ConsumedCapacity of the record's UpdateItem, ${rounds} hits each): **click ${fmt(units.click.write, 2)}**, **open ${fmt(units.open.write, 2)}**; table read units per hit ${fmt(units.click.read, 2)} and ${fmt(units.open.read, 2)} (the message item, for a click its content item too, and whatever the stream's consumers read in the same window). Cost per million hits, prices ${prices.region} as of ${prices.dated}, without Lambda duration: click $${fmt(units.click.cost, 2)}, open $${fmt(units.open.cost, 2)}; **per million tracked messages** with one open and 0.2 clicks each: $${fmt(units.open.cost + 0.2 * units.click.cost, 2)}.`,
    '',
  ];
  return { section, costLines };
}

type SideBySide = { a: Figure; b: Figure; ratio: Figure };

const userAgent = 'bench (Gecko)';

/** sideBySide's rounds before the measured ones. */
const sideBySideWarmUps = 3;

async function storedMessage(who: Caller, sender: string, html: string): Promise<string> {
  const added = await call(who, 'POST', '/message/add-1.0', {
    message_sender: sender,
    to: ['ada@recipient.test'],
    subject: 'Weekly',
    content: { kind: 'html_only', html },
    tracking: { opens: true, clicks: true },
    scheduling: { mode: 'manual-wait' },
  });
  if (added.status !== 200)
    throw new Error(`tracking bench add: ${JSON.stringify(added.body).slice(0, 300)}`);
  return added.body.data.message_uuid as string;
}

/**
 * Write and read units per hit of each route, and the AWS cost per million hits without Lambda
 * duration. The hits record after their answers: the meter stops once the host has settled them.
 */
async function unitsPerHit(
  click: string,
  open: string,
  clickItem: string,
  openItem: string,
  hits: number,
  settle: () => Promise<unknown>,
) {
  const measure = async (url: string, item: string) => {
    const meter = startMeter();
    for (let hit = 0; hit < hits; hit++) await get(url);
    await settle();
    stopMeter();
    const write = (meter.tableWritesByItem.get(item) ?? 0) / hits;
    const read = (meter.capacity.get('table')?.read ?? 0) / hits;
    const cost =
      prices.apiRest + prices.lambdaRequest + write * prices.dynamoWriteUnit + read * prices.dynamoReadUnit;
    return { write, read, cost };
  };
  return { click: await measure(click, clickItem), open: await measure(open, openItem) };
}
