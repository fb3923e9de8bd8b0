import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { importJWK, type JWK, SignJWT } from 'jose';
import { scopes as knownScopes } from '../../shared/platform/auth/scopes.ts';
import { isServiceError } from '../../shared/platform/errors/service-error.ts';

/**
 * `npm run admin -- <command>`: operator commands for accounts, sending domains, suppression lists and
 * the one-off move of messages to a new key layout. They write
 * through the same repository and service modules the functions use, against whatever table the
 * environment names (TABLE_NAME, AWS credentials, AWS_ENDPOINT_URL_DYNAMODB): the deployed table
 * on AWS, or the running local host (its <DATA_DIR>/host.json) when TABLE_NAME is unset.
 */
export const usage = `Usage: npm run -s admin -- <command> [options]

Commands:
  domains add <domain> --account <id>    register a sending domain for an account
  domains list [--account <id>] [--json] list registered domains (all, or one account's)
  domains remove <domain>                unregister a domain
  domains receiving <domain> on|off      receive mail for the domain (inbound), or stop;
                                         on AWS, SES must have verified the domain
  suppressions import <file> --account <id>
                                         add the file's addresses (one a line; blank lines
                                         and lines starting with # are skipped) to the
                                         account's suppression list, reason manual
  accounts disable <id>                  refuse the account's tokens (code 110)
  accounts enable <id>                   accept the account's tokens again
  messages migrate-layout [--account <id>]
                                         move messages written before listing lanes and
                                         watch entries to them (once, after the upgrade;
                                         safe to run again or beside the service)
  token --account <id> [--scopes a,b] [--expires-in <seconds>]
                                         mint a development token with the local identity
                                         provider's key (local use only; default: every scope)

Target: TABLE_NAME, AWS_REGION, AWS credentials and AWS_ENDPOINT_URL_DYNAMODB from the
environment; when TABLE_NAME is unset, the running local host's <DATA_DIR>/host.json
(DATA_DIR defaults to .data), which \`npm start\` writes.

Exit codes: 0 done, 1 the operation failed, 2 usage error.
`;

const seeHelp = 'run `npm run admin -- --help` for usage';
const exitUsage = 2;
const exitFailed = 1;

class UsageError extends Error {}

const options = {
  account: { type: 'string' },
  scopes: { type: 'string' },
  'expires-in': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Options = { account?: string; scopes?: string; 'expires-in'?: string; json?: boolean };

const accountPattern = /^[^\s]{1,256}$/;

function requireAccount(value: string | undefined, what = '--account <id>'): string {
  if (value === undefined || value === '') throw new UsageError(`missing ${what}`);
  if (!accountPattern.test(value))
    throw new UsageError(`"${value}" is not an account id (1–256 characters, no spaces)`);
  return value;
}

function onlyOptions(given: Options, allowed: readonly (keyof Options)[]): void {
  for (const name of Object.keys(given) as (keyof Options)[]) {
    if (!allowed.includes(name)) throw new UsageError(`option --${name} does not apply to this command`);
  }
}

function positionals(list: string[], count: number, names: string): string[] {
  if (list.length !== count) throw new UsageError(`expected ${names}`);
  return list;
}

/** When TABLE_NAME is unset, adopt the environment of the local host that `npm start` describes. */
function adoptLocalHostEnvironment(): string | undefined {
  if ((process.env.TABLE_NAME ?? '') !== '') return undefined;
  const file = join(resolve(process.env.DATA_DIR || '.data'), 'host.json');
  if (!existsSync(file)) return undefined;
  const host = JSON.parse(readFileSync(file, 'utf8')) as { url?: string; env?: Record<string, string> };
  for (const [name, value] of Object.entries(host.env ?? {})) {
    if ((process.env[name] ?? '') === '') process.env[name] = value;
  }
  return host.url;
}

async function domains(action: string | undefined, args: string[], given: Options): Promise<string> {
  const registry = await import('../../shared/domains/registry.ts');
  const repository = await import('../../shared/domains/store/domains.ts');
  const { formatDate } = await import('../../shared/platform/time/format.ts');
  if (action === 'add') {
    onlyOptions(given, ['account']);
    const [domain = ''] = positionals(args, 1, 'one <domain>');
    const account = requireAccount(given.account);
    if (!registry.isValidDomainName(domain)) throw new UsageError(`"${domain}" is not a domain name`);
    const result = await registry.registerDomain(domain, account);
    const name = repository.normaliseDomain(domain);
    if (result === 'owned-by-another-account') {
      throw new Error(`${name} is registered for another account; remove it first`);
    }
    return result === 'registered'
      ? `registered ${name} for account ${account}`
      : `${name} was already registered for account ${account}`;
  }
  if (action === 'list') {
    onlyOptions(given, ['account', 'json']);
    positionals(args, 0, 'no arguments (use --account <id> to filter)');
    // The account's index projects what the DKIM routes need, not `receiving`: read the items.
    const list =
      given.account === undefined
        ? await repository.listAllDomains()
        : (
            await Promise.all(
              (
                await repository.listDomainsOfAccount(requireAccount(given.account))
              ).map((record) => repository.getDomain(record.domain)),
            )
          ).filter((record) => record !== undefined);
    const rows = list.map((record) => ({
      domain: record.domain,
      account: record.accountId,
      created_at: formatDate(record.createdAt),
      receiving: record.receiving,
    }));
    if (given.json) return JSON.stringify(rows, null, 2);
    if (rows.length === 0) return 'no domains registered';
    const width = Math.max(6, ...rows.map((row) => row.domain.length));
    const accountWidth = Math.max(7, ...rows.map((row) => row.account.length));
    return [
      `${'DOMAIN'.padEnd(width)}  ${'ACCOUNT'.padEnd(accountWidth)}  ${'CREATED'.padEnd(29)}  RECEIVING`,
      ...rows.map(
        (row) =>
          `${row.domain.padEnd(width)}  ${row.account.padEnd(accountWidth)}  ${row.created_at.padEnd(29)}  ${row.receiving ? 'on' : 'off'}`,
      ),
    ].join('\n');
  }
  if (action === 'remove') {
    onlyOptions(given, []);
    const [domain = ''] = positionals(args, 1, 'one <domain>');
    if (!(await registry.unregisterDomain(domain))) {
      throw new Error(`${repository.normaliseDomain(domain)} is not registered`);
    }
    return `removed ${repository.normaliseDomain(domain)}`;
  }
  if (action === 'receiving') {
    onlyOptions(given, []);
    const [domain = '', state = ''] = positionals(args, 2, '<domain> on|off');
    if (state !== 'on' && state !== 'off') throw new UsageError(`expected on or off, got "${state}"`);
    const record = await registry.setReceiving(domain, state === 'on');
    const name = repository.normaliseDomain(domain);
    if (record === undefined) throw new Error(`${name} is not registered; add it first`);
    return state === 'on'
      ? `${name} receives mail (account ${record.accountId}); on AWS, with the stack's receiving on, verify the domain in SES and publish its MX record (docs/inbound.md)`
      : `${name} no longer receives mail`;
  }
  throw new UsageError(
    action === undefined ? 'missing domains command' : `unknown domains command "${action}"`,
  );
}

/** Reads an address list: one a line; all lines must be valid, else nothing is imported. */
async function suppressions(action: string | undefined, args: string[], given: Options): Promise<string> {
  if (action !== 'import') {
    throw new UsageError(
      action === undefined ? 'missing suppressions command' : `unknown suppressions command "${action}"`,
    );
  }
  onlyOptions(given, ['account']);
  const [file = ''] = positionals(args, 1, 'one <file>');
  const account = requireAccount(given.account);
  if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
  const { parseSuppressedAddress } = await import('../../shared/suppressions/schemas.ts');
  const { importSuppressions } = await import('../../shared/suppressions/suppressions.ts');
  const emails: string[] = [];
  const invalid: string[] = [];
  readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .forEach((line, index) => {
      const text = line.trim();
      if (text === '' || text.startsWith('#')) return;
      const parsed = parseSuppressedAddress(text);
      if (parsed.ok) emails.push(parsed.email);
      else invalid.push(`line ${index + 1}: ${parsed.message} (${JSON.stringify(text.slice(0, 80))})`);
    });
  if (invalid.length > 0) {
    const shown = invalid.slice(0, 10).join('\n  ');
    const more = invalid.length > 10 ? `\n  … and ${invalid.length - 10} more` : '';
    throw new Error(`${invalid.length} invalid address(es); nothing imported:\n  ${shown}${more}`);
  }
  if (emails.length === 0) throw new Error(`${file} holds no addresses`);
  const started = performance.now();
  const result = await importSuppressions(account, emails);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return `suppressed ${result.added} new address(es) for account ${account}; ${result.existing} already listed (${seconds} s)`;
}

/** The one-off move to listing lanes and watch entries (docs/decisions/0020-watch-entries.md). */
async function messages(action: string | undefined, args: string[], given: Options): Promise<string> {
  if (action !== 'migrate-layout') {
    throw new UsageError(
      action === undefined ? 'missing messages command' : `unknown messages command "${action}"`,
    );
  }
  onlyOptions(given, ['account']);
  positionals(args, 0, 'no arguments (use --account <id> to move one account)');
  const account = given.account === undefined ? undefined : requireAccount(given.account);
  const { migrateMessageLayout } = await import('../../shared/messages/store/message-layout-migration.ts');
  const started = performance.now();
  const result = await migrateMessageLayout(account === undefined ? {} : { account });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return `moved ${result.moved} message(s) to the new layout (${result.skipped} changed meanwhile and left as they are; ${result.scanned} items scanned in ${seconds} s)`;
}

async function accounts(action: string | undefined, args: string[], given: Options): Promise<string> {
  if (action !== 'disable' && action !== 'enable') {
    throw new UsageError(
      action === undefined ? 'missing accounts command' : `unknown accounts command "${action}"`,
    );
  }
  onlyOptions(given, []);
  const [id] = positionals(args, 1, 'one account <id>');
  const account = requireAccount(id, 'account <id>');
  const { setAccountActive } = await import('../../shared/platform/auth/account-store.ts');
  await setAccountActive(account, action === 'enable');
  return action === 'enable'
    ? `account ${account} enabled`
    : `account ${account} disabled: its tokens get code 110 (warm functions notice within 30 s)`;
}

/** Signs a token with the local identity provider's key; never usable against a real provider. */
async function token(args: string[], given: Options): Promise<string> {
  onlyOptions(given, ['account', 'scopes', 'expires-in']);
  positionals(args, 0, 'no arguments');
  const account = requireAccount(given.account);
  const requested =
    given.scopes === undefined
      ? Object.keys(knownScopes)
      : given.scopes
          .split(',')
          .map((scope) => scope.trim())
          .filter((scope) => scope !== '');
  const unknown = requested.filter((scope) => !(scope in knownScopes));
  if (unknown.length > 0) {
    throw new UsageError(
      `unknown scope ${unknown.join(', ')}; known: ${Object.keys(knownScopes).join(', ')}`,
    );
  }
  const expiresIn = Number(given['expires-in'] ?? 12 * 3600);
  if (!Number.isInteger(expiresIn) || expiresIn < 1)
    throw new UsageError('--expires-in must be whole seconds');
  const keyFile = join(resolve(process.env.DATA_DIR || '.data'), 'idp', 'signing-key.json');
  if (!existsSync(keyFile)) {
    throw new Error(`no local signing key at ${keyFile}: start the local host first (npm start)`);
  }
  const issuer = process.env.AUTH_ISSUER;
  if (issuer === undefined || issuer === '') {
    throw new Error('unknown issuer: set AUTH_ISSUER or start the local host (npm start) to write host.json');
  }
  const { localAudience } = await import('../local/identity.ts');
  const jwk = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
  const accountClaim = process.env.AUTH_ACCOUNT_CLAIM || 'sub';
  return new SignJWT({ scope: requested.join(' '), [accountClaim]: account })
    .setProtectedHeader({ alg: 'RS256', kid: String(jwk.kid), typ: 'JWT' })
    .setIssuer(issuer)
    .setAudience(process.env.AUTH_AUDIENCE || localAudience)
    .setSubject(account)
    .setIssuedAt()
    .setExpirationTime(`${expiresIn}s`)
    .sign(await importJWK(jwk, 'RS256'));
}

export async function runAdmin(argv: string[]): Promise<{ code: number; out?: string; err?: string }> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    return { code: exitUsage, err: `error: ${(error as Error).message}\n${seeHelp}` };
  }
  const { help, ...given } = parsed.values;
  const [group, ...rest] = parsed.positionals;
  if (help) return { code: 0, out: usage };
  if (group === undefined) return { code: exitUsage, err: usage };
  try {
    const hostUrl = adoptLocalHostEnvironment();
    let out: string;
    if (group === 'domains') out = await domains(rest[0], rest.slice(1), given);
    else if (group === 'accounts') out = await accounts(rest[0], rest.slice(1), given);
    else if (group === 'suppressions') out = await suppressions(rest[0], rest.slice(1), given);
    else if (group === 'messages') out = await messages(rest[0], rest.slice(1), given);
    else if (group === 'token') out = await token(rest, given);
    else throw new UsageError(`unknown command "${group}"`);
    const note = hostUrl !== undefined && group !== 'token' ? `(local host at ${hostUrl})` : undefined;
    return { code: 0, out, ...(note === undefined ? {} : { err: note }) };
  } catch (error) {
    if (error instanceof UsageError) return { code: exitUsage, err: `error: ${error.message}\n${seeHelp}` };
    if (isServiceError(error)) {
      const hint = hints[error.code] === undefined ? '' : `\nhint: ${hints[error.code]}`;
      return { code: exitFailed, err: `error: ${error.message} (code ${error.code})${hint}` };
    }
    return { code: exitFailed, err: `error: ${error instanceof Error ? error.message : String(error)}` };
  }
}

const hints: Record<number, string> = {
  3: 'set TABLE_NAME (and AWS credentials), or start the local host with `npm start`',
  4: 'is the database reachable? (a stale <DATA_DIR>/host.json names a local host that is not running)',
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await runAdmin(process.argv.slice(2));
  if (result.out !== undefined) process.stdout.write(`${result.out}\n`);
  if (result.err !== undefined) process.stderr.write(`${result.err}\n`);
  process.exitCode = result.code;
}
