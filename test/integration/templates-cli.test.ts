import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { hostInfo, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import { statuses, templateCall, templateData } from '../support/templates.ts';

useHostEnvironment();

const cli = join(import.meta.dirname, '..', '..', 'clients', 'templates-cli.ts');
const work = mkdtempSync(join(tmpdir(), 'svc-mail-templates-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs `npm run templates -- …` as CI would: the command, a token and a base URL in the environment. */
function run(who: TestAccount, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', cli, ...args],
      { env: { ...process.env, SVC_MAIL_TOKEN: who.token, SVC_MAIL_BASE_URL: hostInfo().url } },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

/** Every file under `dir` with its content, by relative path. */
function tree(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const alias of readdirSync(dir).sort()) {
    for (const file of readdirSync(join(dir, alias)).sort()) {
      files[`${alias}/${file}`] = readFileSync(join(dir, alias, file), 'utf8');
    }
  }
  return files;
}

describe('templates push and pull (npm run templates)', () => {
  it('pulls a folder, shows with --dry-run what a push would do while changing nothing, pushes, and round-trips', async () => {
    const who = await newAccount('tcli');
    await templateData(who, 'add', {
      alias: 'base',
      name: 'Base layout',
      subject: '',
      html: '<main>{{{@content}}}</main>\n',
    });
    await templateData(who, 'publish', { alias: 'base' });
    await templateData(who, 'add', {
      alias: 'welcome',
      name: 'Welcome',
      subject: 'Welcome, {{name}}',
      html: '<p>Hello {{name}}</p>\n',
      text: 'Hello {{name}}\n',
      layout_alias: 'base',
    });
    await templateData(who, 'publish', { alias: 'welcome' });
    await templateData(who, 'add', {
      alias: 'draft-only',
      name: 'Draft',
      subject: 'Draft',
      text: 'Not live yet\n',
    });

    const first = join(work, 'first');
    const pulled = await run(who, ['pull', first]);
    assert.equal(pulled.code, 0, pulled.stderr);
    assert.match(pulled.stdout, /3 templates in/);
    assert.deepEqual(tree(first), {
      'base/body.html.hbs': '<main>{{{@content}}}</main>\n',
      'base/subject.hbs': '\n',
      'base/template.json': '{\n  "name": "Base layout"\n}\n',
      'draft-only/body.txt.hbs': 'Not live yet\n',
      'draft-only/subject.hbs': 'Draft\n',
      'draft-only/template.json': '{\n  "name": "Draft"\n}\n',
      'welcome/body.html.hbs': '<p>Hello {{name}}</p>\n',
      'welcome/body.txt.hbs': 'Hello {{name}}\n',
      'welcome/subject.hbs': 'Welcome, {{name}}\n',
      'welcome/template.json': '{\n  "name": "Welcome",\n  "layout_alias": "base"\n}\n',
    });

    // Edit one template, add a new one that uses a new layout, in the folder.
    writeFileSync(join(first, 'welcome', 'body.html.hbs'), '<p>Hello {{name}}, welcome aboard</p>\n');
    mkdirSync(join(first, 'receipt'));
    writeFileSync(join(first, 'receipt', 'template.json'), '{"name": "Receipt", "layout_alias": "plain"}\n');
    writeFileSync(join(first, 'receipt', 'subject.hbs'), 'Receipt {{number}}\n');
    writeFileSync(join(first, 'receipt', 'body.txt.hbs'), 'Paid: {{amount}}\n');
    mkdirSync(join(first, 'plain'));
    writeFileSync(join(first, 'plain', 'template.json'), '{"name": "Plain layout"}\n');
    writeFileSync(join(first, 'plain', 'body.txt.hbs'), '{{{@content}}}\n-- \nAcme\n');

    const dry = await run(who, ['push', first, '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.deepEqual(dry.stdout.trim().split('\n'), [
      'unchanged base (version 1)',
      'would create    plain (version 1)',
      'would publish   plain (version 1)',
      'would publish   draft-only (version 1)',
      'would create    receipt (version 1)',
      'would publish   receipt (version 1)',
      'would update    welcome (version 2)',
      'would publish   welcome (version 2)',
      '7 changes (dry run: nothing changed)',
    ]);
    // Nothing changed.
    const welcomeAfterDry = await templateData(who, 'query', { alias: 'welcome' });
    assert.equal(welcomeAfterDry.version.version, 1);
    assert.equal((await templateCall(who, 'query', { alias: 'receipt' })).body.error.code, 112);
    assert.equal((await templateCall(who, 'query', { alias: 'plain' })).body.error.code, 112);
    assert.equal(
      (await templateData(who, 'query', { alias: 'draft-only' })).template.published_version,
      null,
    );

    const pushed = await run(who, ['push', first]);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.match(pushed.stdout, /^update {4}welcome \(version 2\)$/m);
    const welcome = await templateData(who, 'query', { alias: 'welcome' });
    assert.deepEqual(statuses(welcome.template), { 1: 'superseded', 2: 'published' });
    assert.equal(welcome.version.html, '<p>Hello {{name}}, welcome aboard</p>\n');
    const receipt = await templateData(who, 'query', { alias: 'receipt' });
    assert.equal(receipt.template.published_version, 1);
    assert.equal(receipt.version.subject, 'Receipt {{number}}');
    assert.equal(receipt.version.layout_alias, 'plain');
    assert.equal((await templateData(who, 'query', { alias: 'draft-only' })).template.published_version, 1);

    // The same folder again: nothing to do.
    const again = await run(who, ['push', first]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /^0 changes$/m);

    // Round trip: pulling into another folder gives the folder that was pushed.
    const second = join(work, 'second');
    assert.equal((await run(who, ['pull', second])).code, 0);
    const expected = tree(first);
    expected['plain/subject.hbs'] = '\n';
    expected['plain/template.json'] = '{\n  "name": "Plain layout"\n}\n';
    expected['receipt/template.json'] = '{\n  "name": "Receipt",\n  "layout_alias": "plain"\n}\n';
    assert.deepEqual(tree(second), expected);
  });

  it('a dry run reports what the API refuses, with the part and line, and exits 1', async () => {
    const who = await newAccount('tcli');
    const folder = join(work, 'broken');
    mkdirSync(join(folder, 'oops'), { recursive: true });
    writeFileSync(join(folder, 'oops', 'template.json'), '{"name": "Oops"}');
    writeFileSync(join(folder, 'oops', 'body.html.hbs'), '<p>ok</p>\n{{#each items}}\n');
    const result = await run(who, ['push', folder, '--dry-run']);
    assert.equal(result.code, 1);
    // The unclosed block is named where it opens, in words.
    assert.match(
      result.stderr,
      /^add oops: 107 .*html: line 2: `\{\{#each\}\}` opened on line 2 is never closed; add `\{\{\/each\}\}`/,
    );
    const usage = await run(who, ['push']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage: npm run templates/);
  });
});
