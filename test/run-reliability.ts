import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { summaryFile } from './support/figures.ts';

/**
 * `npm run test:reliability`: the reliability project (test/reliability) at full size, on vitest
 * with the same local host as `npm test`. Sizes can still be overridden from the environment.
 * Prints the figures every test recorded (see test/support/figures.ts) at the end.
 */
const fullSizes: Record<string, string> = {
  HOSTILE_RUNS: '2000',
  LOAD_MESSAGES: '5000',
  SMTP_FLOOD_MESSAGES: '1000',
  FAULT_MESSAGES: '150',
  RACE_ROUNDS: '20',
  ISOLATION_RUNS: '25',
  FAIRNESS_EVENTS: '1000',
  FAIRNESS_MESSAGES: '5000',
};
for (const [name, value] of Object.entries(fullSizes)) process.env[name] ??= value;
process.env.RELIABILITY_SUMMARY ??= summaryFile();
rmSync(process.env.RELIABILITY_SUMMARY, { force: true });

const files = process.argv.slice(2);
const run = spawnSync('npx', ['vitest', 'run', '--project', 'reliability', ...files], {
  stdio: 'inherit',
  env: { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' },
});
const file = process.env.RELIABILITY_SUMMARY;
if (existsSync(file)) process.stdout.write(`\nReliability figures (${file}):\n${readFileSync(file, 'utf8')}`);
process.exit(run.status ?? 1);
