import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { unsubscribeUrlFor } from '../shared/delivery/unsubscribe/link.ts';
import { startMeter, stopMeter } from './meter.ts';
import { type Caller, call, rawDynamo, table } from './service.ts';
import { figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * `npm run bench` section 15, streams (docs/streams.md): a broadcast add against a transactional
 * add, and the one-click unsubscribe POST against `GET /health` plus one raw conditional write (what
 * the POST must do beyond a public request), in alternating rounds of one run. Then the write units
 * of one unsubscribe, metered. Held adds (manual-wait): the send is measured in section 5.
 */
const body = (sender: string, stream: 'transactional' | 'broadcast') => ({
  message_sender: sender,
  to: [`reader-${randomUUID().slice(0, 8)}@recipient.test`],
  subject: 'Benchmark',
  content: { kind: 'text_only', text: 'Hello from the benchmark.' },
  scheduling: { mode: 'manual-wait' },
  ...(stream === 'broadcast' ? { stream, list_id: 'Bench news <news.bench.test>' } : {}),
});

async function timed(work: () => Promise<{ status: number }>): Promise<number> {
  const started = performance.now();
  const response = await work();
  if (response.status !== 200) throw new Error(`streams bench: status ${response.status}`);
  return performance.now() - started;
}

const oneClick = (who: Caller, url: string) =>
  fetch(`${who.url}${new URL(url).pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  }).then(async (response) => ({ status: response.status, text: await response.text() }));

export async function streamsSection(
  who: Caller,
  sender: string,
  account: string,
  quick: boolean,
): Promise<{ lines: string[]; unitsLine: string }> {
  progress('12 streams');
  const rounds = quick ? 10 : 60;
  const adds = { transactional: [] as number[], broadcast: [] as number[] };
  for (let round = 0; round < rounds + 2; round++) {
    const order =
      round % 2 === 0 ? (['transactional', 'broadcast'] as const) : (['broadcast', 'transactional'] as const);
    for (const stream of order) {
      const ms = await timed(() => call(who, 'POST', '/message/add-1.0', body(sender, stream)));
      if (round >= 2) adds[stream].push(ms);
    }
  }
  const addRatio = figure(adds.broadcast.map((ms, index) => ms / (adds.transactional[index] as number)));

  // Distinct recipients, so each POST writes its own suppression (a repeat would only be refused).
  const held = await call(who, 'POST', '/message/add-1.0', body(sender, 'broadcast'));
  const messageUuid = held.body.data.message_uuid as string;
  const urls = await Promise.all(
    Array.from({ length: rounds + 3 }, (_, index) =>
      unsubscribeUrlFor({
        messageUuid,
        account,
        email: `gone-${index}-${randomUUID().slice(0, 6)}@recipient.test`,
      }),
    ),
  );
  const posts: number[] = [];
  const healths: number[] = [];
  const writes: number[] = [];
  for (let round = 0; round < rounds + 2; round++) {
    const post = await timed(() => oneClick(who, urls[round] as string));
    const health = await timed(() => call(who, 'GET', '/health'));
    const started = performance.now();
    await rawDynamo.send(
      new PutCommand({
        TableName: table(),
        Item: { pk: `BENCH_WRITE#${randomUUID()}`, sk: 'X', at: Date.now() },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    const write = performance.now() - started;
    if (round >= 2) {
      posts.push(post);
      healths.push(health);
      writes.push(write);
    }
  }
  const postRatio = figure(
    posts.map((ms, index) => ms / ((healths[index] as number) + (writes[index] as number))),
  );

  // The write units of one unsubscribe of a recipient the message has: the suppression and the note.
  const recipient = `reader-${randomUUID().slice(0, 8)}@recipient.test`;
  const addressed = await call(who, 'POST', '/message/add-1.0', {
    ...body(sender, 'broadcast'),
    to: [recipient],
  });
  const url = await unsubscribeUrlFor({
    messageUuid: addressed.body.data.message_uuid,
    account,
    email: recipient,
  });
  const meter = startMeter();
  await oneClick(who, url);
  stopMeter();
  const units = meter.capacity.get('table')?.write ?? 0;
  const indexUnits = [...meter.capacity]
    .filter(([name]) => name !== 'table')
    .reduce((sum, [, u]) => sum + u.write, 0);
  const byItem = [...meter.tableWritesByItem].map(([item, n]) => `${item} ${fmt(n, 1)}`).join(', ');
  const unitsLine = `One-click unsubscribe (docs/streams.md): ${fmt(units, 1)} table write units (${byItem || 'none'}) and ${fmt(indexUnits, 1)} index write units per unsubscribe, before the stream consumers count it and fan it out like any other message change.`;

  return {
    unitsLine,
    lines: [
      '### 15. Streams',
      '',
      `Alternating rounds (${rounds} each, after 2 warm-up rounds). The unsubscribe POST is compared with \`GET /health\` plus one raw conditional PutItem, measured side by side in each round.`,
      '',
      '| operation | ms | compared with | ms | ratio | target |',
      '|---|---:|---|---:|---:|---|',
      `| broadcast add | ${fmtFigure(figure(adds.broadcast))} | transactional add | ${fmtFigure(figure(adds.transactional))} | ${fmtFigure(addRatio, 2)} | ≤ 1.1: ${checkTarget('broadcast-add', fmtFigure(addRatio, 2), addRatio.median <= 1.1)} |`,
      `| unsubscribe POST | ${fmtFigure(figure(posts))} | GET /health + conditional write | ${fmtFigure(figure(healths))} + ${fmtFigure(figure(writes))} | ${fmtFigure(postRatio, 2)} | ≤ 1.2: ${checkTarget('unsubscribe-post', fmtFigure(postRatio, 2), postRatio.median <= 1.2)} |`,
      '',
      unitsLine,
      '',
    ],
  };
}
