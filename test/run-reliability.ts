import { existsSync, readFileSync, rmSync } from 'node:fs';
import { summaryFile } from './support/figures.ts';

/**
 * `npm run test:reliability`: the reliability suite (test/reliability) at full size, through the
 * same runner as `npm test` (one local host). Sizes can still be overridden from the environment.
 * Prints the figures every test recorded (see test/support/figures.ts) at the end.
 */
const fullSizes: Record<string, string> = {
  HOSTILE_RUNS: '2000',
  LOAD_MESSAGES: '5000',
  FAULT_MESSAGES: '150',
  RACE_ROUNDS: '20',
  ISOLATION_RUNS: '25',
};
for (const [name, value] of Object.entries(fullSizes)) process.env[name] ??= value;
process.env.RELIABILITY_SUMMARY ??= summaryFile();
rmSync(process.env.RELIABILITY_SUMMARY, { force: true });
const exit = process.exit.bind(process);
// test/run.ts ends with process.exit(code): print the figures first.
process.exit = ((code?: number) => {
  const file = process.env.RELIABILITY_SUMMARY as string;
  if (existsSync(file))
    process.stdout.write(`\nReliability figures (${file}):\n${readFileSync(file, 'utf8')}`);
  exit(code);
}) as typeof process.exit;
if (process.argv.length <= 2) process.argv.push('test/reliability');
await import('./run.ts');
