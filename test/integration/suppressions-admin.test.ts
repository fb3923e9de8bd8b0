import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { adminCommand, adminProcess } from '../support/admin.ts';
import { recordFigures } from '../support/figures.ts';
import { mintToken, uniqueAccount, useHostEnvironment } from '../support/host.ts';
import { lookup, suppressionCall } from '../support/suppressions.ts';

useHostEnvironment();
const scratch = mkdtempSync(join(tmpdir(), 'svc-mail-suppressions-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The 10,000-address import runs as an operator runs it, in its own process (its time is recorded). */
const admin = (args: string[]) => adminProcess(args);

describe('admin command: suppressions import', () => {
  it('imports 10,000 addresses in batches, keeps existing entries, and is visible through the API', async () => {
    const account = uniqueAccount('import');
    const who = { token: await mintToken({ account }) };
    await suppressionCall(who, 'add', { emails: ['already@example.net'] });
    const before = await lookup(who, 'already@example.net');
    const total = 10_000;
    const lines = ['# exported from the old provider', ''];
    for (let index = 0; index < total - 1; index++) lines.push(`User${index}@Import.Example.net`);
    lines.push('already@example.net');
    const file = join(scratch, 'list.txt');
    writeFileSync(file, `${lines.join('\n')}\n`);

    const started = Date.now();
    const run = await admin(['suppressions', 'import', file, '--account', account]);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      new RegExp(`suppressed ${total - 1} new address\\(es\\) for account ${account}; 1 already listed`),
    );
    recordFigures('suppressions import', {
      addresses: total,
      import_seconds: Number(run.stdout.match(/\((\d+(?:\.\d+)?) s\)/)?.[1]),
      seconds_with_process_start: Math.round(seconds * 10) / 10,
    });

    // Every address is listed (lower-cased, reason manual), the existing entry untouched.
    let cursor: string | null = null;
    const seen = new Set<string>();
    do {
      const page: Awaited<ReturnType<typeof suppressionCall>> = await suppressionCall(who, 'query', {
        filters: { limit: 1000 },
        ...(cursor === null ? {} : { cursor }),
      });
      assert.equal(page.status, 200, page.text);
      for (const entry of page.body.data.suppressions) {
        assert.equal(entry.email, entry.email.toLowerCase());
        seen.add(entry.email);
      }
      cursor = page.body.data.next_cursor;
    } while (cursor !== null);
    assert.equal(seen.size, total);
    assert.ok(seen.has('user9998@import.example.net'));
    assert.deepEqual(await lookup(who, 'already@example.net'), before);
    assert.equal((await lookup(who, 'USER42@import.example.net'))?.reason, 'manual');

    const again = await admin(['suppressions', 'import', file, '--account', account]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, new RegExp(`suppressed 0 new address\\(es\\).*; ${total} already listed`));
  });

  it('refuses a file with an invalid line and imports nothing; usage errors exit 2', async () => {
    const account = uniqueAccount('import');
    const file = join(scratch, 'bad.txt');
    writeFileSync(file, 'good@example.net\nnot an address\n');
    const run = await adminCommand(['suppressions', 'import', file, '--account', account]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /1 invalid address\(es\); nothing imported/);
    assert.match(run.stderr, /line 2/);
    assert.equal(await lookup({ token: await mintToken({ account }) }, 'good@example.net'), null);

    const usage = await Promise.all([
      adminCommand(['suppressions', 'import', file]),
      adminCommand(['suppressions', 'import', join(scratch, 'missing.txt'), '--account', account]),
      adminCommand(['suppressions', 'export', file, '--account', account]),
    ]);
    assert.deepEqual(
      usage.map((result) => result.code),
      [2, 2, 2],
    );
    assert.match(usage[1]?.stderr ?? '', /no such file/);
    const empty = join(scratch, 'empty.txt');
    writeFileSync(empty, '# nothing yet\n\n');
    const nothing = await adminCommand(['suppressions', 'import', empty, '--account', account]);
    assert.equal(nothing.code, 1);
    assert.match(nothing.stderr, /holds no addresses/);
  });
});
