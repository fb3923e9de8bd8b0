import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, describe, it } from 'vitest';
import { getDomain } from '../../shared/domains/store/domains.ts';
import { getAccount } from '../../shared/platform/auth/account-store.ts';
import { type AdminRun, adminCommand, adminProcess } from '../support/admin.ts';
import { call, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

const info = useHostEnvironment();
const scratch = mkdtempSync(join(tmpdir(), 'svc-mail-admin-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/*
 * The commands run in this process (`adminCommand`, against the host's environment); what only a
 * separate process shows (its exit code and output, the target it finds in its environment or
 * `<DATA_DIR>/host.json`) runs as `npm run admin` does (`adminProcess`).
 */
const admin = adminCommand;

describe('admin command: domains', () => {
  it('adds a domain through the repository, lists it, refuses another owner, removes it', async () => {
    const account = uniqueAccount('admin');
    const domain = uniqueDomain('admin');

    const added = await admin(['domains', 'add', domain.toUpperCase(), '--account', account]);
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, new RegExp(`registered ${domain} for account ${account}`));
    assert.equal((await getDomain(domain))?.accountId, account);

    const again = await admin(['domains', 'add', domain, '--account', account]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /already registered/);

    const taken = await admin(['domains', 'add', domain, '--account', uniqueAccount('other')]);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /registered for another account/);
    assert.equal((await getDomain(domain))?.accountId, account, 'the owner is unchanged');

    const listed = await admin(['domains', 'list', '--account', account, '--json']);
    assert.equal(listed.code, 0, listed.stderr);
    const rows = JSON.parse(listed.stdout) as Array<{ domain: string; account: string; created_at: string }>;
    assert.deepEqual(
      rows.map((row) => [row.domain, row.account]),
      [[domain, account]],
    );
    assert.match(rows[0]?.created_at ?? '', /[+-]\d{2}:\d{2}$/);

    const all = await admin(['domains', 'list']);
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /^DOMAIN\s+ACCOUNT\s+CREATED\s+RECEIVING$/m);
    assert.match(all.stdout, new RegExp(`^${domain.replace(/\./g, '\\.')}\\s+${account}\\s.*\\soff$`, 'm'));

    // Receiving (inbound mail) is off until turned on, through the same repository the functions read.
    assert.equal((await getDomain(domain))?.receiving, false);
    const on = await admin(['domains', 'receiving', domain, 'on']);
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /receives mail/);
    assert.equal((await getDomain(domain))?.receiving, true);
    const listedOn = await admin(['domains', 'list', '--account', account, '--json']);
    assert.equal((JSON.parse(listedOn.stdout) as Array<{ receiving: boolean }>)[0]?.receiving, true);
    const off = await admin(['domains', 'receiving', domain, 'off']);
    assert.equal(off.code, 0, off.stderr);
    assert.equal((await getDomain(domain))?.receiving, false);
    const unknown = await admin(['domains', 'receiving', uniqueDomain(), 'on']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /is not registered/);

    const removed = await admin(['domains', 'remove', domain]);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(await getDomain(domain), undefined);

    const missing = await admin(['domains', 'remove', domain]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /is not registered/);
  });

  it('rejects bad usage with exit code 2 and says why', async () => {
    const cases: Array<[string[], RegExp]> = [
      [[], /Usage: npm run/],
      [['domains', 'add', 'not a domain', '--account', 'a'], /is not a domain name/],
      [['domains', 'add', uniqueDomain()], /missing --account/],
      [['domains', 'frobnicate'], /unknown domains command "frobnicate"/],
      [['domains', 'remove'], /expected one <domain>/],
      [['domains', 'receiving', 'example.test', 'maybe'], /expected on or off, got "maybe"/],
      [['domains', 'receiving', 'example.test'], /expected <domain> on\|off/],
      [['domains', 'list', '--scopes', 'x'], /--scopes does not apply/],
      [['domains', 'list', '--bogus'], /Unknown option '--bogus'/],
      [['accounts', 'delete', 'a'], /unknown accounts command "delete"/],
      [['token', '--account', 'a', '--scopes', 'messages:send,root'], /unknown scope root/],
      [['token', '--account', 'a', '--expires-in', 'soon'], /--expires-in must be whole seconds/],
      [['accounts', 'enable'], /expected one account <id>/],
      [['accounts', 'disable', 'two words'], /is not an account id/],
      [['suppressions'], /missing suppressions command/],
      [['messages', 'rebuild'], /unknown messages command "rebuild"/],
      [['messages', 'migrate-layout', 'now'], /expected no arguments/],
      [['messages', 'migrate-layout', '--json'], /--json does not apply/],
      [['launch'], /unknown command "launch"/],
    ];
    const runs = await Promise.all(cases.map(([args]) => admin(args)));
    cases.forEach(([args, message], index) => {
      const run = runs[index] as AdminRun;
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, message, args.join(' '));
      assert.equal(run.stdout, '');
    });
    const help = await admin(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /domains add <domain> --account <id>/);

    // The process prints the same and exits with the code.
    const usage = await adminProcess(['domains', 'frobnicate']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /unknown domains command "frobnicate"/);
    const listed = await adminProcess(['--help']);
    assert.equal(listed.code, 0);
    assert.equal(listed.stdout, help.stdout);
  });

  it('says the database is not configured (code 3) when neither TABLE_NAME nor a local host is there', async () => {
    const empty = mkdtempSync(join(scratch, 'empty-'));
    const run = await adminProcess(['domains', 'list'], {
      DATA_DIR: empty,
      TABLE_NAME: '',
      AWS_REGION: 'us-east-1',
    });
    assert.equal(run.code, 1);
    assert.match(run.stderr, /not configured \(code 3\)/);
    assert.match(run.stderr, /hint: set TABLE_NAME/);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  });

  it('uses the local host described by <DATA_DIR>/host.json when TABLE_NAME is unset', async () => {
    const dataDir = mkdtempSync(join(scratch, 'host-'));
    writeFileSync(join(dataDir, 'host.json'), JSON.stringify({ url: info.url, env: info.env }));
    const account = uniqueAccount('hostjson');
    const domain = uniqueDomain('hostjson');
    const run = await adminProcess(['domains', 'add', domain, '--account', account], { DATA_DIR: dataDir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`local host at ${info.url}`));
    assert.equal((await getDomain(domain))?.accountId, account);
  });
});

describe('admin command: accounts and tokens', () => {
  it('mints a token that the identity provider keys verify, with the requested scopes', async () => {
    const account = uniqueAccount('tok');
    const run = await admin(['token', '--account', account, '--scopes', 'domains:read,avatars:read']);
    assert.equal(run.code, 0, run.stderr);
    const { payload, protectedHeader } = await jwtVerify(
      run.stdout.trim(),
      createRemoteJWKSet(new URL(info.jwksUrl)),
      { issuer: info.issuer, audience: info.audience },
    );
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, account);
    assert.equal(payload.scope, 'domains:read avatars:read');
    assert.ok(typeof payload.exp === 'number' && payload.exp > Date.now() / 1000);
  });

  it('disables an account so that its valid tokens get 110, and enables it again', async () => {
    const account = uniqueAccount('disabled');
    const disabled = await admin(['accounts', 'disable', account]);
    assert.equal(disabled.code, 0, disabled.stderr);
    assert.equal((await getAccount(account))?.active, false);

    const minted = await admin(['token', '--account', account, '--scopes', 'keepalive:run']);
    const response = await call('POST', '/keepalive-1.0', { token: minted.stdout.trim() });
    assert.equal(response.status, 401, response.text);
    assert.equal(response.body.error.code, 110);

    const enabled = await admin(['accounts', 'enable', account]);
    assert.equal(enabled.code, 0, enabled.stderr);
    const record = await getAccount(account);
    assert.equal(record?.active, true);
  });
});
