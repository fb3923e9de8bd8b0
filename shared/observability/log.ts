import { appendFileSync } from 'node:fs';

/**
 * One JSON object per line on stdout, which CloudWatch Logs indexes as structured fields.
 * Deliberately tiny: a full logger library would be larger than the health function's whole
 * bundle budget (see docs/decisions.md). Never pass message bodies, tokens or keys in `fields`.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const threshold = order[(process.env.LOG_LEVEL?.toLowerCase() as Level) ?? 'info'] ?? order.info;

// Locally a file can collect the lines (the test runner does this, so tests can read them).
function write(line: string): void {
  const logFile = process.env.LOG_FILE;
  if (logFile) appendFileSync(logFile, line);
  else process.stdout.write(line);
}

export function log(level: Level, message: string, fields: Record<string, unknown> = {}): void {
  if (order[level] < threshold) return;
  const line = JSON.stringify({ level, time: new Date().toISOString(), message, ...fields });
  write(`${line}\n`);
}

/** A short, safe description of an unexpected error: its class and message, never its stack. */
export function describeError(error: unknown): Record<string, string> {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message.slice(0, 300) };
  return { errorName: typeof error };
}
