import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The reliability suite's figures (requests tried, failures, messages lost, duplicates…), one JSON
 * line per test in RELIABILITY_SUMMARY (default: <tmp>/svc-mail-reliability-summary.jsonl), so that
 * docs/reliability.md can quote an actual run. Also printed, for the test log.
 */
export function summaryFile(): string {
  return process.env.RELIABILITY_SUMMARY ?? join(tmpdir(), 'svc-mail-reliability-summary.jsonl');
}

export function recordFigures(test: string, figures: Record<string, number | string>): void {
  const line = JSON.stringify({ test, at: new Date().toISOString(), ...figures });
  appendFileSync(summaryFile(), `${line}\n`);
  process.stdout.write(`# figures ${line}\n`);
}
