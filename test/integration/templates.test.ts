import assert from 'node:assert/strict';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, it } from 'vitest';
import { dynamo } from '../../shared/platform/aws/clients.ts';
import { tableName } from '../../shared/platform/config/storage.ts';
import { maxTemplatesPerAccount } from '../../shared/templates/model/template.ts';
import { listVersions, templateKeys } from '../../shared/templates/store/templates.ts';
import { mintToken, useHostEnvironment } from '../support/host.ts';
import { isoWithOffset, newAccount, objectExists } from '../support/messages.ts';
import { statuses, templateCall, templateData } from '../support/templates.ts';

useHostEnvironment();

const welcome = {
  alias: 'welcome',
  name: 'Welcome mail',
  subject: 'Welcome, {{user.first_name}}',
  html: '<h1>Hello {{user.first_name}}</h1>\n{{#each items}}<p>{{title}}</p>{{/each}}',
};

describe('template routes: drafts, immutable published versions, rollback', () => {
  it('add makes version 1 a draft; update makes new drafts; publish and rollback move the live version', async () => {
    const who = await newAccount('tpl');
    const added = await templateData(who, 'add', welcome);
    assert.equal(added.version, 1);
    assert.deepEqual(
      { ...added.template, versions: statuses(added.template) },
      { alias: 'welcome', name: 'Welcome mail', published_version: null, versions: { 1: 'draft' } },
    );
    assert.match(added.template.versions[0].created_at, isoWithOffset);

    const published = await templateData(who, 'publish', { alias: 'welcome' });
    assert.equal(published.version, 1);
    assert.equal(published.template.published_version, 1);

    const updated = await templateData(who, 'update', {
      alias: 'welcome',
      subject: 'Hi {{user.first_name}}!',
    });
    assert.equal(updated.version, 2);
    assert.deepEqual(statuses(updated.template), { 1: 'published', 2: 'draft' });
    assert.deepEqual(
      updated.template.versions.map((entry: { version: number }) => entry.version),
      [2, 1],
      'newest first',
    );

    // Version 2 keeps the HTML of version 1: an update builds on the latest version.
    const two = await templateData(who, 'query', { alias: 'welcome', version: 2 });
    assert.equal(two.version.subject, 'Hi {{user.first_name}}!');
    assert.equal(two.version.html, welcome.html);
    assert.equal(two.version.text, null);
    assert.equal(two.version.status, 'draft');

    const live = await templateData(who, 'publish', { alias: 'welcome' });
    assert.equal(live.version, 2);
    assert.deepEqual(statuses(live.template), { 1: 'superseded', 2: 'published' });

    const rollback = await templateData(who, 'publish', { alias: 'welcome', version: 1 });
    assert.equal(rollback.template.published_version, 1);
    assert.deepEqual(statuses(rollback.template), { 1: 'published', 2: 'superseded' });

    // Published versions never change: the one that was live is still exactly as it was written.
    const one = await templateData(who, 'query', { alias: 'welcome', version: 1 });
    assert.equal(one.version.subject, welcome.subject);
    assert.equal(one.version.status, 'published');

    // null removes a part; a rename alone makes no version.
    const textOnly = await templateData(who, 'update', {
      alias: 'welcome',
      html: null,
      text: 'Hello {{user.first_name}}',
    });
    assert.equal(textOnly.version, 3);
    const latest = await templateData(who, 'query', { alias: 'welcome' });
    assert.equal(latest.version.version, 3);
    assert.equal(latest.version.html, null);
    const renamed = await templateData(who, 'update', { alias: 'welcome', name: 'Welcome (new)' });
    assert.equal(renamed.version, null);
    assert.equal(renamed.template.name, 'Welcome (new)');
    assert.equal(renamed.template.versions.length, 3);
  });

  it('dry runs of add, update, publish and delete answer what they would do and change nothing', async () => {
    const who = await newAccount('tpl');
    const dryAdd = await templateCall(who, 'add', welcome, { query: { dry_run: 'true' } });
    assert.equal(dryAdd.status, 200, dryAdd.text);
    assert.equal(dryAdd.body.data.dry_run, true);
    assert.equal(dryAdd.body.data.version, 1);
    assert.equal((await templateCall(who, 'query', { alias: 'welcome' })).status, 404);

    await templateData(who, 'add', welcome);
    const dryUpdate = await templateCall(
      who,
      'update',
      { alias: 'welcome', text: 'x' },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dryUpdate.body.data.version, 2);
    const dryPublish = await templateCall(
      who,
      'publish',
      { alias: 'welcome' },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dryPublish.body.data.template.published_version, 1);
    const dryDelete = await templateCall(who, 'delete', { alias: 'welcome' }, { query: { dry_run: 'true' } });
    assert.equal(dryDelete.body.data.deleted, true);
    assert.equal(dryDelete.body.data.dry_run, true);

    const after = await templateData(who, 'query', { alias: 'welcome' });
    assert.equal(after.template.published_version, null);
    assert.deepEqual(statuses(after.template), { 1: 'draft' });
    // Query and render take no dry run (114).
    const dryQuery = await templateCall(who, 'query', { alias: 'welcome' }, { query: { dry_run: 'true' } });
    assert.equal(dryQuery.body.error.code, 114);
  });

  it('lists an account’s templates by alias, page by page', async () => {
    const who = await newAccount('tpl');
    for (const alias of ['c-one', 'a-one', 'b-one']) await templateData(who, 'add', { ...welcome, alias });
    const first = await templateData(who, 'query', { filters: { limit: 2 } });
    assert.deepEqual(
      first.templates.map((entry: { alias: string }) => entry.alias),
      ['a-one', 'b-one'],
    );
    assert.equal(first.count, 2);
    assert.equal(first.templates[0].latest_version, 1);
    assert.equal(first.templates[0].published_version, null);
    const second = await templateData(who, 'query', { filters: { limit: 2 }, cursor: first.next_cursor });
    assert.deepEqual(
      second.templates.map((entry: { alias: string }) => entry.alias),
      ['c-one'],
    );
    assert.equal(second.next_cursor, null);
  });
});

describe('template routes: 112 for an alias the caller does not have', () => {
  it('answers 112 on every template route for another account’s alias and for an unknown one', async () => {
    const owner = await newAccount('tpl');
    const stranger = await newAccount('tpl');
    await templateData(owner, 'add', { ...welcome, alias: 'private' });
    await templateData(owner, 'publish', { alias: 'private' });
    const attempts: Array<[Parameters<typeof templateCall>[1], Record<string, unknown>]> = [
      ['query', { alias: 'private' }],
      ['update', { alias: 'private', subject: 'mine now' }],
      ['publish', { alias: 'private' }],
      ['delete', { alias: 'private' }],
      ['render', { alias: 'private', model: {} }],
      ['render', { html: '{{{@content}}}', layout_alias: 'private' }],
      ['add', { ...welcome, alias: 'uses-it', layout_alias: 'private' }],
      ['query', { alias: 'never-existed' }],
    ];
    for (const [action, body] of attempts) {
      const response = await templateCall(stranger, action, body);
      assert.equal(response.status, 404, `${action} ${JSON.stringify(body)}: ${response.text}`);
      assert.equal(response.body.error.code, 112);
    }
    // Nothing of the owner's changed.
    const kept = await templateData(owner, 'query', { alias: 'private' });
    assert.equal(kept.version.subject, welcome.subject);
    assert.equal(kept.template.published_version, 1);
    // An unknown version of one's own template is 112 as well.
    const noVersion = await templateCall(owner, 'query', { alias: 'private', version: 9 });
    assert.equal(noVersion.body.error.code, 112);
    assert.equal(noVersion.body.error.details[0].field, 'version');
  });

  it('needs templates:read to read and templates:write to write (113)', async () => {
    const who = await newAccount('tpl');
    const reader = { token: await mintToken({ account: who.account, scopes: ['templates:read'] }) };
    const refused = await templateCall(reader, 'add', welcome);
    assert.equal(refused.body.error.code, 113);
    const writer = { token: await mintToken({ account: who.account, scopes: ['templates:write'] }) };
    assert.equal((await templateCall(writer, 'add', welcome)).status, 200);
    assert.equal((await templateCall(writer, 'render', { alias: 'welcome' })).body.error.code, 113);
    assert.equal((await templateCall(reader, 'render', { alias: 'welcome', model: {} })).status, 200);
  });
});

describe('template routes: validation and limits', () => {
  it('refuses Handlebars that runs code or does not parse, naming the part and the line (107)', async () => {
    const who = await newAccount('tpl');
    const response = await templateCall(who, 'add', {
      alias: 'bad',
      name: 'Bad',
      subject: '{{lookup user "name"}}',
      html: '<p>ok</p>\n{{> footer}}',
      text: 'one\ntwo {{#if a}}\n{{/each}}',
    });
    assert.equal(response.status, 406, response.text);
    assert.equal(response.body.error.code, 107);
    const details = response.body.error.details as Array<{ field: string; message: string }>;
    assert.deepEqual(
      details.map((detail) => detail.field),
      ['subject', 'html', 'text'],
    );
    assert.match(details[0]?.message ?? '', /^line 1: .*helpers are not available/);
    assert.match(details[1]?.message ?? '', /^line 2: Partials/);
    assert.equal(
      details[2]?.message,
      'line 3: `{{/each}}` on line 3 does not close `{{#if}}` opened on line 2; close that first with `{{/if}}`',
    );
  });

  it('refuses a version over 500 KB, a bad alias, unknown fields and a template that is its own layout', async () => {
    const who = await newAccount('tpl');
    const big = await templateCall(who, 'add', { ...welcome, html: 'x'.repeat(500 * 1024) });
    assert.equal(big.body.error.code, 107);
    assert.match(big.body.error.details[0].message, /at most 500 KB/);
    await templateData(who, 'add', welcome);
    const bigUpdate = await templateCall(who, 'update', {
      alias: 'welcome',
      text: 'y'.repeat(400 * 1024),
      html: 'z'.repeat(101 * 1024),
    });
    assert.equal(bigUpdate.body.error.code, 107);
    const badAlias = await templateCall(who, 'add', { ...welcome, alias: 'Welcome!' });
    assert.equal(badAlias.body.error.details[0].field, 'alias');
    const unknown = await templateCall(who, 'add', { ...welcome, alias: 'x', sujbect: 'typo' });
    assert.equal(unknown.body.error.details[0].field, 'sujbect');
    const self = await templateCall(who, 'update', { alias: 'welcome', layout_alias: 'welcome' });
    assert.equal(self.body.error.details[0].field, 'layout_alias');
    const taken = await templateCall(who, 'add', welcome);
    assert.equal(taken.body.error.code, 111);
  });

  it('keeps at most 1,000 templates per account (111), counted in the same transaction as the add', async () => {
    const who = await newAccount('tpl');
    await templateData(who, 'add', { ...welcome, alias: 'first' });
    // Arrange an account that already has 999 templates: its counter, as the adds would have left it.
    await dynamo().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: templateKeys.counter(who.account),
        UpdateExpression: 'SET template_count = :count',
        ExpressionAttributeValues: { ':count': maxTemplatesPerAccount - 1 },
      }),
    );
    assert.equal((await templateCall(who, 'add', { ...welcome, alias: 'last' })).status, 200);
    const dryOver = await templateCall(
      who,
      'add',
      { ...welcome, alias: 'dry' },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dryOver.body.error?.code, 111, 'a dry run checks the limit too');
    const over = await templateCall(who, 'add', { ...welcome, alias: 'one-too-many' });
    assert.equal(over.body.error.code, 111, over.text);
    assert.match(over.body.error.message, /at most 1000 templates/);
    // A delete makes room again.
    await templateData(who, 'delete', { alias: 'first' });
    assert.equal((await templateCall(who, 'add', { ...welcome, alias: 'one-too-many' })).status, 200);
  });
});

describe('template routes: the newest 100 versions', () => {
  it('an update past 100 versions removes the oldest one that is not live, with its parts', async () => {
    const who = await newAccount('tpl');
    await templateData(who, 'add', { ...welcome, text: 'v1' });
    await templateData(who, 'publish', { alias: 'welcome' });
    for (let version = 2; version <= 100; version++) {
      await templateData(who, 'update', { alias: 'welcome', text: `v${version}` });
    }
    const { getTemplateHead } = await import('../../shared/templates/store/templates.ts');
    const head = await getTemplateHead(who.account, 'welcome');
    assert.ok(head);
    const second = (await listVersions(head.templateId)).find((entry) => entry.version === 2);
    assert.ok(second);

    const past = await templateData(who, 'update', { alias: 'welcome', text: 'v101' });
    assert.equal(past.version, 101);
    const numbers = past.template.versions.map((entry: { version: number }) => entry.version);
    assert.equal(numbers.length, 100);
    assert.deepEqual(
      [numbers[0], numbers.at(-2), numbers.at(-1)],
      [101, 3, 1],
      'version 2 is gone, 1 is live',
    );
    assert.equal((await templateCall(who, 'query', { alias: 'welcome', version: 2 })).body.error.code, 112);
    assert.equal((await templateData(who, 'query', { alias: 'welcome', version: 1 })).version.text, 'v1');
    assert.equal(await objectExists(second.objectKey), false);
    assert.equal((await listVersions(head.templateId)).length, 100);
  });
});

describe('template routes: layouts and delete', () => {
  it('keeps a layout that another template uses (111), and deletes a template with its versions and parts', async () => {
    const who = await newAccount('tpl');
    await templateData(who, 'add', {
      alias: 'base',
      name: 'Base',
      subject: '',
      html: '<main>{{{@content}}}</main>',
    });
    await templateData(who, 'add', { ...welcome, layout_alias: 'base' });
    const inUse = await templateCall(who, 'delete', { alias: 'base' });
    assert.equal(inUse.body.error.code, 111, inUse.text);
    assert.match(inUse.body.error.details[0].message, /welcome/);
    // A version with a layout is published only once the layout has a published version.
    const early = await templateCall(who, 'publish', { alias: 'welcome' });
    assert.equal(early.body.error.code, 111);
    await templateData(who, 'publish', { alias: 'base' });
    await templateData(who, 'publish', { alias: 'welcome' });

    const head = await templateData(who, 'query', { alias: 'welcome' });
    assert.equal(head.version.layout_alias, 'base');
    await templateData(who, 'update', { alias: 'welcome', layout_alias: null });
    // The published version still names the layout: still in use.
    assert.equal((await templateCall(who, 'delete', { alias: 'base' })).body.error.code, 111);
    await templateData(who, 'publish', { alias: 'welcome' });

    const before = await templateData(who, 'query', { filters: {} });
    const baseSummary = before.templates.find((entry: { alias: string }) => entry.alias === 'base');
    assert.ok(baseSummary);
    const deleted = await templateData(who, 'delete', { alias: 'base' });
    assert.equal(deleted.deleted, true);
    assert.equal(deleted.template.alias, 'base');
    assert.equal((await templateCall(who, 'query', { alias: 'base' })).body.error.code, 112);
  });

  it('removes the version records and parts of a deleted template', async () => {
    const who = await newAccount('tpl');
    await templateData(who, 'add', welcome);
    await templateData(who, 'update', { alias: 'welcome', text: 'two' });
    const { getTemplateHead } = await import('../../shared/templates/store/templates.ts');
    const head = await getTemplateHead(who.account, 'welcome');
    assert.ok(head);
    const versions = await listVersions(head.templateId);
    assert.equal(versions.length, 2);
    for (const version of versions) assert.equal(await objectExists(version.objectKey), true);
    await templateData(who, 'delete', { alias: 'welcome' });
    assert.deepEqual(await listVersions(head.templateId), []);
    for (const version of versions) assert.equal(await objectExists(version.objectKey), false);
  });
});

describe('render: the editor’s preview', () => {
  it('answers syntax errors and missing variables with their lines, and a suggested model, never an error', async () => {
    const who = await newAccount('tpl');
    const response = await templateCall(who, 'render', {
      subject: 'Order {{order.id}}',
      html: '<p>Hi {{user.name}}</p>\n<ul>{{#each items}}<li>{{title}}</li>{{/each}}</ul>\n<p>{{total}}</p>',
      text: 'broken {{#if x}}\nno end',
      model: { order: { id: 42 }, user: { name: '<Ada>' }, items: [{ title: 'A & B' }, {}] },
    });
    assert.equal(response.status, 200, response.text);
    const data = response.body.data;
    assert.equal(data.subject, 'Order 42');
    assert.equal(data.html, '<p>Hi &lt;Ada&gt;</p>\n<ul><li>A &amp; B</li><li></li></ul>\n<p></p>');
    // The text part did not parse: the preview derives it from the HTML, as a send would not.
    assert.match(data.text, /Hi <Ada>/);
    assert.deepEqual(
      data.errors.map((error: { part: string; line: number }) => `${error.part}:${error.line}`),
      ['text:1', 'html:2', 'html:3'],
    );
    assert.match(data.errors[1].message, /items\[1\]\.title is not in the model/);
    assert.deepEqual(data.suggested_model, {
      order: { id: 'id_Value' },
      user: { name: 'name_Value' },
      items: [{ title: 'title_Value' }],
      total: 'total_Value',
    });
  });

  it('renders a stored version (default: the published one) inside its layout', async () => {
    const who = await newAccount('tpl');
    await templateData(who, 'add', {
      alias: 'base',
      name: 'Base',
      subject: '',
      html: '<main>{{brand}}|{{{@content}}}</main>',
      text: '{{brand}}\n{{{@content}}}',
    });
    await templateData(who, 'publish', { alias: 'base' });
    await templateData(who, 'add', {
      alias: 'note',
      name: 'Note',
      subject: 'Note',
      html: '<p>{{body}}</p>',
      layout_alias: 'base',
    });
    const draftOnly = await templateData(who, 'render', {
      alias: 'note',
      model: { brand: 'Acme', body: 'v1' },
    });
    assert.equal(draftOnly.html, '<main>Acme|<p>v1</p></main>', 'nothing published: the latest version');
    assert.deepEqual(draftOnly.errors, []);
    assert.deepEqual(draftOnly.suggested_model, { body: 'body_Value', brand: 'brand_Value' });
    await templateData(who, 'publish', { alias: 'note' });
    await templateData(who, 'update', { alias: 'note', html: '<p>v2 {{body}}</p>' });
    const live = await templateData(who, 'render', { alias: 'note', model: { brand: 'Acme', body: 'x' } });
    assert.equal(live.html, '<main>Acme|<p>x</p></main>', 'the published version, not the newer draft');
    const two = await templateData(who, 'render', { alias: 'note', version: 2, model: { body: 'x' } });
    assert.equal(two.html, '<main>|<p>v2 x</p></main>');
    assert.deepEqual(two.errors, [{ part: 'layout.html', line: 1, message: 'brand is not in the model' }]);
  });
});
