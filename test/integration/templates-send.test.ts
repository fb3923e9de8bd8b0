import assert from 'node:assert/strict';
import PostalMime from 'postal-mime';
import { describe, it } from 'vitest';
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { useHostEnvironment } from '../support/host.ts';
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

  it('a foreign or unknown alias is 112; subject or content beside a template is 107', async () => {
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
