import { textFromHtml } from '../shared/platform/mail/text-from-html.ts';
import { fmt, progress } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * `npm run bench` section 12, HTML to text (docs/security.md, "Limits"): the text part of an
 * HTML-only newsletter of 400 KB with a wide table (40 cells a row), and of the same newsletter at
 * twice the size, converted in this process as message add converts it on acceptance. The best of
 * several rounds each (the least disturbed by other work on the machine). Target: linear, the time
 * at 2× at most 2.3 × the time at 1×.
 */
function newsletter(bytes: number): string {
  const row = `<tr>${Array.from({ length: 40 }, (_, cell) => `<td style="padding:4px">item ${cell}</td>`).join('')}</tr>`;
  return `<html><body><h1>Our news</h1><p>Hello reader,</p><table>${row.repeat(Math.ceil(bytes / row.length))}</table><p>Bye</p></body></html>`;
}

async function bestMs(html: string, rounds: number): Promise<number> {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    await textFromHtml(html);
    best = Math.min(best, performance.now() - started);
  }
  return best;
}

export async function htmlToTextSection(quick: boolean): Promise<string[]> {
  progress('11 HTML to text');
  const rounds = quick ? 3 : 7;
  const single = newsletter(400 * 1024);
  const double = newsletter(800 * 1024);
  // Warm: the converter loads and compiles on first use.
  await textFromHtml(newsletter(10 * 1024));
  const at1 = await bestMs(single, rounds);
  const at2 = await bestMs(double, rounds);
  const ratio = at2 / at1;
  return [
    '### 12. HTML to text',
    '',
    `The text part of an HTML-only newsletter with a wide table (40 cells a row), as message add derives it on acceptance; best of ${rounds} rounds each.`,
    '',
    '| input | ms | ratio (2× ÷ 1×) | target ≤ 2.3 (linear) |',
    '|---|---:|---:|---|',
    `| ${fmt(single.length / 1024, 0)} KB | ${fmt(at1, 0)} | | |`,
    `| ${fmt(double.length / 1024, 0)} KB | ${fmt(at2, 0)} | ${fmt(ratio, 2)} | ${checkTarget('html-to-text-linear', fmt(ratio, 2), ratio <= 2.3)} |`,
    '',
  ];
}
