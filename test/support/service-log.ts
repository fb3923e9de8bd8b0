import { readFileSync, statSync } from 'node:fs';
import { vi } from 'vitest';
import { hostInfo } from './host.ts';

/**
 * The local host's log lines (LOG_FILE, one JSON object a line) written from now on: what a test
 * waits on to know that something has happened (a fan-out, a dropped job) instead of sleeping, and
 * reads to prove what did not happen in it.
 */
export interface ServiceLog {
  lines(): Record<string, any>[];
  /** Waits until some line holds; the lines so far. */
  waitFor(
    what: string,
    predicate: (lines: Record<string, any>[]) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, any>[]>;
}

export function serviceLogFromNow(file = hostInfo().logFile): ServiceLog {
  const offset = statSync(file).size;
  const lines = () =>
    readFileSync(file)
      .subarray(offset)
      .toString('utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, any>];
        } catch {
          return [];
        }
      });
  return {
    lines,
    waitFor: (what, predicate, timeoutMs = 90_000) =>
      vi.waitFor(
        () => {
          const now = lines();
          if (!predicate(now)) throw new Error(`no log line yet: ${what}`);
          return now;
        },
        { timeout: timeoutMs, interval: 200 },
      ),
  };
}
