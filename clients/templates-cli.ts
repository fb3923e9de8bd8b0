import { createSvcMailClient } from './svc-mail.ts';
import { type PlannedChange, pull, push, SyncError } from './templates-sync.ts';

/**
 * Templates in source control, through the public API (docs/templates.md):
 *
 *   npm run templates -- push <folder> [--dry-run] [--draft]
 *   npm run templates -- pull <folder>
 *
 * SVC_MAIL_TOKEN is a Bearer token with templates:read (and templates:write to push);
 * SVC_MAIL_BASE_URL the API's address (default: the local host, http://127.0.0.1:3000).
 * Exit status: 0 done, 1 the API refused something (the message says what), 2 wrong usage.
 */
const usage = `usage: npm run templates -- push <folder> [--dry-run] [--draft]
       npm run templates -- pull <folder>
environment: SVC_MAIL_TOKEN (required), SVC_MAIL_BASE_URL (default http://127.0.0.1:3000)
`;

const [command, folder, ...flags] = process.argv.slice(2);
const known = new Set(['--dry-run', '--draft']);
const token = process.env.SVC_MAIL_TOKEN;
if (
  (command !== 'push' && command !== 'pull') ||
  folder === undefined ||
  flags.some((flag) => !known.has(flag)) ||
  (command === 'pull' && flags.length > 0)
) {
  process.stderr.write(usage);
  process.exit(2);
}
if (token === undefined || token === '') {
  process.stderr.write(`SVC_MAIL_TOKEN is not set.\n${usage}`);
  process.exit(2);
}
const api = createSvcMailClient({ baseUrl: process.env.SVC_MAIL_BASE_URL ?? 'http://127.0.0.1:3000', token });
const dryRun = flags.includes('--dry-run');

const line = (change: PlannedChange) =>
  `${dryRun && change.action !== 'unchanged' ? 'would ' : ''}${change.action.padEnd(9)} ${change.alias}${change.version === null ? '' : ` (version ${change.version})`}\n`;

try {
  if (command === 'push') {
    const changes = await push(api, folder, { dryRun, draft: flags.includes('--draft') });
    for (const change of changes) process.stdout.write(line(change));
    const changed = changes.filter((change) => change.action !== 'unchanged').length;
    process.stdout.write(
      `${changes.length === 0 ? 'no templates in the folder' : `${changed} change${changed === 1 ? '' : 's'}${dryRun ? ' (dry run: nothing changed)' : ''}`}\n`,
    );
  } else {
    const aliases = await pull(api, folder);
    for (const alias of aliases) process.stdout.write(`pulled    ${alias}\n`);
    process.stdout.write(`${aliases.length} template${aliases.length === 1 ? '' : 's'} in ${folder}\n`);
  }
} catch (error) {
  if (!(error instanceof SyncError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
