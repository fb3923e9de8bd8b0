import { type Caller, call } from './service.ts';
import { type Figure, figure, fmt, fmtFigure, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * Large messages (docs/messages.md, "Size limits"): the add of a message with a 4.4 MB attachment
 * (the largest that fits the 6 MB request once base64-encoded) beside the add of a 1 KB one, and a
 * 1.1 MB one in between, each manual-wait. The ratio 4.4 MB / 1 KB is published; the target is
 * that the time grows linearly with the size: the time each megabyte adds at 4.4 MB is at most
 * 1.5 × what it adds at 1.1 MB (a check or a copy that is worse than linear shows up here first).
 * Each round times the three adds back to back; figures are medians over the rounds.
 */
const sizes = { small: 1024, middle: 1_100_000, large: 4_400_000 } as const;

function body(sender: string, bytes: number) {
  return {
    message_sender: sender,
    to: ['Ada <ada@recipient.test>'],
    subject: 'Invoice',
    content: { kind: 'text_only', text: 'Your invoice is attached.' },
    attachments: [
      {
        filename: 'invoice.pdf',
        content_type: 'application/pdf',
        content: Buffer.alloc(bytes, 0x25).toString('base64'),
      },
    ],
    scheduling: { mode: 'manual-wait' },
  };
}

async function timedAdd(who: Caller, payload: unknown): Promise<number> {
  const t0 = performance.now();
  const response = await call(who, 'POST', '/message/add-1.0', payload);
  const elapsed = performance.now() - t0;
  if (response.status !== 200)
    throw new Error(`large add failed: ${JSON.stringify(response.body).slice(0, 300)}`);
  return elapsed;
}

export async function largeAddBench(who: Caller, sender: string, rounds: number): Promise<string[]> {
  const bodies = {
    small: body(sender, sizes.small),
    middle: body(sender, sizes.middle),
    large: body(sender, sizes.large),
  };
  const times = { small: [] as number[], middle: [] as number[], large: [] as number[] };
  const ratios: number[] = [];
  const linearity: number[] = [];
  for (let round = -2; round < rounds; round++) {
    const small = await timedAdd(who, bodies.small);
    const middle = await timedAdd(who, bodies.middle);
    const large = await timedAdd(who, bodies.large);
    if (round < 0) continue;
    times.small.push(small);
    times.middle.push(middle);
    times.large.push(large);
    ratios.push(large / small);
    const perMbMiddle = (middle - small) / ((sizes.middle - sizes.small) / 1e6);
    const perMbLarge = (large - small) / ((sizes.large - sizes.small) / 1e6);
    linearity.push(perMbLarge / perMbMiddle);
  }
  const ratio: Figure = figure(ratios);
  const linear: Figure = figure(linearity);
  progress(
    `  large add: 1 KB ${fmt(figure(times.small).median)} ms, 1.1 MB ${fmt(figure(times.middle).median)} ms, 4.4 MB ${fmt(figure(times.large).median)} ms`,
  );
  return [
    '### Large messages: add of a 4.4 MB attachment',
    '',
    'The add (manual-wait) of one message whose attachment is 1 KB, 1.1 MB and 4.4 MB (5.9 MB of JSON with the base64), timed back to back in each round: validation (a linear base64 scan), the stored content in S3 and the message item. Medians (min–max) in ms.',
    '',
    '| attachment | add ms |',
    '|---|---|',
    `| 1 KB | ${fmtFigure(figure(times.small))} |`,
    `| 1.1 MB | ${fmtFigure(figure(times.middle))} |`,
    `| 4.4 MB | ${fmtFigure(figure(times.large))} |`,
    '',
    '| figure | value | target |',
    '|---|---|---|',
    `| 4.4 MB add / 1 KB add | ${fmtFigure(ratio, 1)} | (published) |`,
    `| ms per MB at 4.4 MB / ms per MB at 1.1 MB | ${fmtFigure(linear, 2)} | ≤ 1.5: ${checkTarget('large-add-linear', fmtFigure(linear, 2), linear.median <= 1.5)} |`,
    '',
  ];
}
