import assert from 'node:assert/strict';
import PostalMime from 'postal-mime';
import { describe, it } from 'vitest';
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { add, newAccount, query, type TestAccount } from '../support/messages.ts';
import { templateData } from '../support/templates.ts';

useHostEnvironment();

const order = {
  alias: 'order',
  name: 'Order confirmation',
  subject: 'Order {{order.id}} for {{user.name}}',
  html: '<h1>Thanks, {{user.name}}</h1>\n<ul>\n{{#each items}}<li>{{title}}: {{price}}</li>{{/each}}\n</ul>\n{{{signature}}}',
};

const model = {
  order: { id: 'A-17' },
  user: { name: 'Ada <script>alert(1)</script> & Co' },
  items: [
    { title: 'Tea "Earl Grey"', price: '4.50' },
    { title: 'Cups & saucers', price: '12.00' },
  ],
  signature: '<p><i>The shop</i></p>',
};

function templated(who: TestAccount, template: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { message_sender: who.sender, to: ['Ada <ada@recipient.test>'], template, ...extra };
}

async function delivered(who: TestAccount, uuid: string) {
  await waitForStatus(who.token, uuid, ['delivered']);
  const eml = outboxEml(uuid);
  assert.ok(eml, 'the recipient MTA wrote the message to the outbox');
  return PostalMime.parse(eml);
}

/** A layout `base` (reads `brand`) and a template `hello` (reads `name`) inside it, both published. */
async function publishHelloInBase(who: TestAccount) {
  await templateData(who, 'add', {
    alias: 'base',
    name: 'Base',
    subject: '',
    html: '<div class="brand">{{brand}}</div>{{{@content}}}<footer>{{brand}}</footer>',
    text: '{{brand}}\n\n{{{@content}}}\n-- {{brand}}',
  });
  await templateData(who, 'publish', { alias: 'base' });
  await templateData(who, 'add', {
    alias: 'hello',
    name: 'Hello',
    subject: 'Hello {{name}}',
    html: '<p>Hello {{name}}</p>',
    text: 'Hello {{name}}',
    layout_alias: 'base',
  });
  await templateData(who, 'publish', { alias: 'hello' });
}

describe('sending with a template', () => {
  it('draft → publish → send: the delivered message holds the rendered, escaped content and records the template', async () => {
    const who = await newAccount('tps');
    await templateData(who, 'add', order);
    // Nothing is published yet: a send without a version is 111.
    const early = await add(who, templated(who, { alias: 'order', model }));
    assert.equal(early.body.error.code, 111, early.text);
    await templateData(who, 'publish', { alias: 'order' });

    const accepted = await add(who, templated(who, { alias: 'order', model }));
    assert.equal(accepted.status, 200, accepted.text);
    assert.deepEqual(Object.keys(accepted.body.data), ['message_uuid', 'status']);
    const uuid = accepted.body.data.message_uuid as string;
    const mail = await delivered(who, uuid);

    assert.equal(mail.subject, 'Order A-17 for Ada <script>alert(1)</script> & Co');
    assert.ok(
      mail.html?.includes('<h1>Thanks, Ada &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co</h1>'),
      mail.html,
    );
    assert.ok(
      mail.html?.includes('<li>Tea &quot;Earl Grey&quot;: 4.50</li><li>Cups &amp; saucers: 12.00</li>'),
    );
    assert.ok(mail.html?.includes('<p><i>The shop</i></p>'), 'the triple-stash output is raw');
    assert.ok(!mail.html?.includes('<script>'), 'no model value reaches the HTML unescaped through {{ }}');
    // The template has no text part: it is derived from the rendered HTML, unescaped.
    assert.match(mail.text ?? '', /Thanks, Ada <script>alert\(1\)<\/script> & Co/);
    assert.match(mail.text ?? '', /Tea "Earl Grey": 4\.50/);

    const details = (await query(who, { message_uuid: uuid })).body.data;
    assert.deepEqual(details.template, { alias: 'order', version: 1 });
    assert.equal(details.subject, 'Order A-17 for Ada <script>alert(1)</script> & Co');
    assert.equal(details.content_kind, 'mixed');
  });

  it('a missing variable is 107 naming it, its part and its line; nothing is stored', async () => {
    const who = await newAccount('tps');
    await templateData(who, 'add', order);
    await templateData(who, 'publish', { alias: 'order' });
    const response = await add(
      who,
      templated(who, {
        alias: 'order',
        model: {
          order: {},
          user: { name: 'x' },
          items: [{ title: 'a', price: '1' }, { title: 'b' }],
          signature: '',
        },
      }),
    );
    assert.equal(response.status, 406, response.text);
    assert.equal(response.body.error.code, 107);
    assert.deepEqual(response.body.error.details, [
      { field: 'template.model.order.id', message: 'order.id is not in the model (subject line 1)' },
      { field: 'template.model.items[1].price', message: 'items[1].price is not in the model (html line 3)' },
    ]);
    const listed = await query(who, { filters: {} });
    assert.equal(listed.body.data.count, 0);
  });

  it('an edit after acceptance does not change the accepted message; rollback sends the older version again', async () => {
    const who = await newAccount('tps');
    await templateData(who, 'add', {
      alias: 'note',
      name: 'Note',
      subject: 'Version one',
      text: 'One: {{value}}',
    });
    await templateData(who, 'publish', { alias: 'note' });
    const held = await add(
      who,
      templated(who, { alias: 'note', model: { value: 'kept' } }, { scheduling: { mode: 'manual-wait' } }),
    );
    assert.equal(held.status, 200, held.text);
    const heldUuid = held.body.data.message_uuid as string;

    // Edit and publish while the first message waits.
    await templateData(who, 'update', {
      alias: 'note',
      subject: 'Version two',
      text: 'Two: {{value}} {{extra}}',
    });
    await templateData(who, 'publish', { alias: 'note' });
    const released = await add(who, { scheduling: { mode: 'manual-send', message_uuid: heldUuid } });
    assert.equal(released.status, 200, released.text);
    const first = await delivered(who, heldUuid);
    assert.equal(first.subject, 'Version one');
    assert.equal(first.text?.trim(), 'One: kept');
    assert.equal(first.html, undefined, 'a text-only template sends text only');

    // Version 2 is live: it needs `extra`.
    const missing = await add(who, templated(who, { alias: 'note', model: { value: 'v' } }));
    assert.equal(missing.body.error.details[0].field, 'template.model.extra');
    const second = await add(who, templated(who, { alias: 'note', model: { value: 'v', extra: 'e' } }));
    const two = await delivered(who, second.body.data.message_uuid);
    assert.equal(two.subject, 'Version two');

    // Rollback: publish version 1 again; a send renders version 1, and the message records it.
    await templateData(who, 'publish', { alias: 'note', version: 1 });
    const third = await add(who, templated(who, { alias: 'note', model: { value: 'back' } }));
    const thirdUuid = third.body.data.message_uuid as string;
    const back = await delivered(who, thirdUuid);
    assert.equal(back.subject, 'Version one');
    assert.equal(back.text?.trim(), 'One: back');
    assert.deepEqual((await query(who, { message_uuid: thirdUuid })).body.data.template, {
      alias: 'note',
      version: 1,
    });

    // A named version is sent even when another one is live.
    const pinned = await add(
      who,
      templated(who, { alias: 'note', version: 2, model: { value: 'p', extra: 'q' } }),
    );
    assert.deepEqual((await query(who, { message_uuid: pinned.body.data.message_uuid })).body.data.template, {
      alias: 'note',
      version: 2,
    });
  });

  it('renders the layout around the body and records both versions', async () => {
    const who = await newAccount('tps');
    await publishHelloInBase(who);
    const accepted = await add(
      who,
      templated(who, { alias: 'hello', model: { name: 'Grace', brand: 'Acme & Co' } }),
    );
    const uuid = accepted.body.data.message_uuid as string;
    const mail = await delivered(who, uuid);
    assert.ok(
      mail.html?.includes(
        '<div class="brand">Acme &amp; Co</div><p>Hello Grace</p><footer>Acme &amp; Co</footer>',
      ),
    );
    assert.equal(mail.text?.trim(), 'Acme & Co\n\nHello Grace\n-- Acme & Co');
    assert.deepEqual((await query(who, { message_uuid: uuid })).body.data.template, {
      alias: 'hello',
      version: 1,
      layout: { alias: 'base', version: 1 },
    });
  });

  it('a foreign or unknown alias is 112, a foreign sender 113; subject or content beside a template is 107', async () => {
    const owner = await newAccount('tps');
    const stranger = await newAccount('tps');
    await templateData(owner, 'add', order);
    await templateData(owner, 'publish', { alias: 'order' });
    for (const alias of ['order', 'nothing-here']) {
      const response = await add(stranger, templated(stranger, { alias, model }));
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error.code, 112);
      assert.equal(response.body.error.details[0].field, 'template.alias');
    }
    // The template record and the sender's domain are read together: the domain half still decides.
    for (const sender of [stranger.sender, 'noreply@unregistered-domain.test']) {
      const foreignSender = await add(
        owner,
        templated(owner, { alias: 'order', model }, { message_sender: sender }),
      );
      assert.equal(foreignSender.status, 403, foreignSender.text);
      assert.equal(foreignSender.body.error.code, 113);
      assert.equal(foreignSender.body.error.details[0].field, 'message_sender');
    }
    const unknownVersion = await add(owner, templated(owner, { alias: 'order', version: 5, model }));
    assert.equal(unknownVersion.body.error.code, 112);
    assert.equal(unknownVersion.body.error.details[0].field, 'template.version');
    const both = await add(
      owner,
      templated(
        owner,
        { alias: 'order', model },
        { subject: 'x', content: { kind: 'text_only', text: 'y' } },
      ),
    );
    assert.equal(both.body.error.code, 107);
    assert.deepEqual(
      both.body.error.details.map((detail: { field: string }) => detail.field),
      ['subject', 'content'],
    );
    const dry = await add(owner, templated(owner, { alias: 'order', model }), { query: { dry_run: 'true' } });
    assert.deepEqual(dry.body.data, { message_uuid: null, status: 'queued', dry_run: true });
    const dryMissing = await add(owner, templated(owner, { alias: 'order', model: {} }), {
      query: { dry_run: 'true' },
    });
    assert.equal(dryMissing.body.error.code, 107, 'a dry run renders and checks the model too');
  });
});

/** POST /message/batch-1.0 with the account's token (a few messages: well within the rate limit). */
function batch(
  who: TestAccount,
  body: Record<string, unknown>,
  options: { headers?: Record<string, string>; query?: Record<string, string> } = {},
) {
  return call('POST', '/message/batch-1.0', { token: who.token, body, ...options });
}

/** A text-only template `note` ("Note {{n}}" / "Number {{n}}"), published as version 1. */
async function publishNote(who: TestAccount) {
  await templateData(who, 'add', {
    alias: 'note',
    name: 'Note',
    subject: 'Note {{n}}',
    text: 'Number {{n}}',
  });
  await templateData(who, 'publish', { alias: 'note' });
}

const waiting = { scheduling: { mode: 'manual-wait' } };

describe('batch items with templates', () => {
  it('each item is rendered when the batch is accepted, exactly as add renders it; a retry answers the same uuids', async () => {
    const who = await newAccount('tpb');
    await templateData(who, 'add', order);
    await templateData(who, 'publish', { alias: 'order' });
    await publishNote(who);

    const single = await add(who, templated(who, { alias: 'order', model }));
    assert.equal(single.status, 200, single.text);
    const body = {
      messages: [
        templated(who, { alias: 'order', model }),
        templated(who, { alias: 'note', model: { n: 1 } }, waiting),
        templated(who, { alias: 'note', model: { n: 2 } }, waiting),
        // A plain message beside the templated ones.
        {
          message_sender: who.sender,
          to: ['ada@recipient.test'],
          subject: 'Plain',
          content: { kind: 'text_only', text: 'p' },
          ...waiting,
        },
      ],
    };
    const key = `tpb-${Date.now()}`;
    const accepted = await batch(who, body, { headers: { 'Idempotency-Key': key } });
    assert.equal(accepted.status, 200, accepted.text);
    const results = accepted.body.data.results as Array<{ message_uuid: string; status: string }>;
    assert.deepEqual(
      results.map((result) => result.status),
      ['queued', 'waiting', 'waiting', 'waiting'],
    );

    // The batch's message and add's: the same subject, HTML and derived text, the same template record.
    const fromAdd = await delivered(who, single.body.data.message_uuid);
    const fromBatch = await delivered(who, results[0]?.message_uuid as string);
    assert.equal(fromBatch.subject, fromAdd.subject);
    assert.equal(fromBatch.subject, 'Order A-17 for Ada <script>alert(1)</script> & Co');
    assert.equal(fromBatch.html, fromAdd.html);
    assert.equal(fromBatch.text, fromAdd.text);
    assert.ok(
      fromBatch.html?.includes('<h1>Thanks, Ada &lt;script&gt;alert(1)&lt;/script&gt; &amp; Co</h1>'),
    );
    const details = async (uuid: string) => (await query(who, { message_uuid: uuid })).body.data;
    assert.deepEqual((await details(results[0]?.message_uuid as string)).template, {
      alias: 'order',
      version: 1,
    });
    for (const index of [1, 2]) {
      const note = await details(results[index]?.message_uuid as string);
      assert.equal(note.subject, `Note ${index}`);
      assert.equal(note.content_kind, 'text_only');
      assert.deepEqual(note.template, { alias: 'note', version: 1 });
    }
    const plain = await details(results[3]?.message_uuid as string);
    assert.equal(plain.subject, 'Plain');
    assert.equal(plain.template, undefined);

    // A new version is published; the retry (same key, same body) answers what was accepted.
    await templateData(who, 'update', { alias: 'note', subject: 'Changed {{n}} {{extra}}', text: '{{n}}' });
    await templateData(who, 'publish', { alias: 'note' });
    const retry = await batch(who, body, { headers: { 'Idempotency-Key': key } });
    assert.equal(retry.status, 200, retry.text);
    assert.deepEqual(retry.body.data.results, accepted.body.data.results);
    assert.equal((await details(results[1]?.message_uuid as string)).subject, 'Note 1');
  });

  it('strict: a missing variable names its message and the variable, a foreign alias is 112; nothing is stored', async () => {
    const owner = await newAccount('tpb');
    const who = await newAccount('tpb');
    await templateData(owner, 'add', order);
    await templateData(owner, 'publish', { alias: 'order' });
    await publishNote(who);
    const items = [
      templated(who, { alias: 'note', model: { n: 1 } }, waiting),
      templated(who, { alias: 'note', model: { m: 2 } }, waiting),
      // `order` is the other account's template.
      templated(who, { alias: 'order', model }, waiting),
      templated(who, { alias: 'note', model: { n: 3 } }, waiting),
    ];

    const strict = await batch(who, { messages: items });
    assert.equal(strict.status, 406, strict.text);
    assert.equal(strict.body.error.code, 107, 'the code of the first bad message');
    assert.deepEqual(strict.body.error.details, [
      { field: 'messages[1].template.model.n', message: 'n is not in the model (subject line 1)' },
      { field: 'messages[2].template.alias', message: strict.body.error.details[1].message },
    ]);
    const foreignOnly = await batch(who, { messages: [items[0], items[2]] });
    assert.equal(foreignOnly.status, 404, foreignOnly.text);
    assert.equal(foreignOnly.body.error.code, 112);
    assert.deepEqual(
      foreignOnly.body.error.details.map((detail: { field: string }) => detail.field),
      ['messages[1].template.alias'],
    );
    const dry = await batch(
      who,
      { messages: items, validation: 'permissive' },
      { query: { dry_run: 'true' } },
    );
    assert.equal(dry.status, 200, dry.text);
    assert.equal(dry.body.data.accepted, 2, 'a dry run renders every item too');
    assert.equal((await query(who, { filters: {} })).body.data.count, 0, 'nothing is stored');
  });

  it("permissive: the bad items are reported by index with add's error, the others stored rendered", async () => {
    const owner = await newAccount('tpb');
    const who = await newAccount('tpb');
    await templateData(owner, 'add', order);
    await templateData(owner, 'publish', { alias: 'order' });
    await publishNote(who);
    const response = await batch(who, {
      validation: 'permissive',
      messages: [
        templated(who, { alias: 'note', model: { n: 1 } }, waiting),
        templated(who, { alias: 'note', model: { m: 2 } }, waiting),
        templated(who, { alias: 'order', model }, waiting),
        templated(who, { alias: 'note', model: { n: 3 } }, waiting),
      ],
    });
    assert.equal(response.status, 200, response.text);
    const data = response.body.data;
    assert.equal(data.accepted, 2);
    assert.equal(data.rejected, 2);
    assert.deepEqual(data.results[1], {
      index: 1,
      error: {
        code: 107,
        message: data.results[1].error.message,
        details: [{ field: 'template.model.n', message: 'n is not in the model (subject line 1)' }],
      },
    });
    assert.equal(data.results[2].error.code, 112);
    assert.deepEqual(
      data.results[2].error.details.map((detail: { field: string }) => detail.field),
      ['template.alias'],
    );
    const listed = await query(who, { filters: {} });
    assert.equal(listed.body.data.count, 2);
    for (const [index, n] of [
      [0, 1],
      [3, 3],
    ] as const) {
      const details = (await query(who, { message_uuid: data.results[index].message_uuid })).body.data;
      assert.equal(details.subject, `Note ${n}`);
      assert.deepEqual(details.template, { alias: 'note', version: 1 });
    }
  });

  it('a batch item renders the layout around its template, as add does', async () => {
    const who = await newAccount('tpb');
    await publishHelloInBase(who);
    const items = ['Grace', 'Ada'].map((name) =>
      templated(who, { alias: 'hello', model: { name, brand: 'Acme' } }, waiting),
    );
    const response = await batch(who, {
      messages: [...items, templated(who, { alias: 'hello', model: { name: 'x' } }, waiting)],
    });
    assert.equal(response.status, 406, response.text);
    assert.deepEqual(
      response.body.error.details.map((detail: { field: string }) => detail.field),
      ['messages[2].template.model.brand'],
      'a variable only the layout reads is missing too',
    );
    const accepted = await batch(who, { messages: items });
    assert.equal(accepted.status, 200, accepted.text);
    for (const result of accepted.body.data.results) {
      const details = (await query(who, { message_uuid: result.message_uuid })).body.data;
      assert.deepEqual(details.template, {
        alias: 'hello',
        version: 1,
        layout: { alias: 'base', version: 1 },
      });
    }
  });
});
