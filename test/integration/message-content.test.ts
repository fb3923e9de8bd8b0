import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import PostalMime from 'postal-mime';
import { beforeAll, describe, it } from 'vitest';
import { headerFields } from '../../shared/delivery/content.ts';
import { objectKeys } from '../../shared/messages/model/message.ts';
import {
  addMessage,
  outboxEml,
  queryMessage,
  type SendingDomain,
  sendingDomain,
  verifyDkim,
  waitForStatus,
} from '../support/delivery.ts';
import { call, mintToken, uniqueAccount } from '../support/host.ts';
import { objectExists } from '../support/messages.ts';
import { templateData } from '../support/templates.ts';

/*
 * POST /message/content-1.0 against what the recipients' server (the local SMTP sink) received:
 * the signed message byte for byte (rebuilt from the composition record, never stored at send
 * time), and every part (subject, text, HTML, headers, attachments) as the sink's copy has it.
 */
let sending: SendingDomain;
beforeAll(async () => {
  sending = await sendingDomain('ed25519-sha256');
});

const content = (token: string, uuid: string) =>
  call('POST', '/message/content-1.0', { token, body: { message_uuid: uuid } });

async function download(
  url: string,
): Promise<{ bytes: Buffer; type: string | null; disposition: string | null }> {
  const response = await fetch(url);
  assert.equal(response.status, 200, `GET ${url}`);
  return {
    bytes: Buffer.from(await response.arrayBuffer()),
    type: response.headers.get('content-type'),
    disposition: response.headers.get('content-disposition'),
  };
}

/** Sends, waits until delivered, and checks the content answer against the sink's copy. */
async function sentAndCompared(body: Record<string, unknown>) {
  const { uuid } = await addMessage(sending.token, { message_sender: `shop@${sending.domain}`, ...body });
  await waitForStatus(sending.token, uuid, ['delivered']);
  const received = outboxEml(uuid);
  assert.ok(received, 'the sink has the message');
  const answer = await content(sending.token, uuid);
  assert.equal(answer.status, 200, answer.text);
  const data = answer.body.data;

  // The signed message, byte for byte, with both DKIM signatures still valid.
  assert.ok(data.raw_url);
  const raw = await download(data.raw_url);
  assert.ok(raw.bytes.equals(received), 'raw_url differs from what the recipient server received');
  assert.equal(raw.type, 'message/rfc822');
  assert.match(raw.disposition ?? '', new RegExp(`${uuid}\\.eml`));
  assert.deepEqual(
    (await verifyDkim(raw.bytes)).map((result) => result.result),
    ['pass', 'pass'],
  );

  // Part for part.
  const parsed = await PostalMime.parse(received);
  assert.equal(data.subject, parsed.subject);
  assert.equal(data.text, parsed.text ?? null);
  assert.equal(data.html, parsed.html ?? null);
  assert.deepEqual(data.headers, headerFields(received));
  assert.equal(data.attachments.length, parsed.attachments.length);
  for (const [index, attachment] of parsed.attachments.entries()) {
    const shown = data.attachments[index];
    assert.equal(shown.filename, attachment.filename);
    assert.equal(shown.content_type, attachment.mimeType);
    const bytes = Buffer.from(attachment.content as ArrayBuffer);
    assert.equal(shown.size, bytes.length);
    const fetched = await download(shown.url);
    assert.ok(fetched.bytes.equals(bytes), `attachment ${index} differs`);
    assert.equal(fetched.type, attachment.mimeType);
  }
  assert.ok(Date.parse(data.expires_at) > Date.now());
  return { uuid, data, parsed, received };
}

describe('POST /message/content-1.0: the message as the recipients got it', () => {
  it('text only', async () => {
    const { data } = await sentAndCompared({
      to: ['Ada <ada@content.test>'],
      subject: 'Grüße, text only',
      content: { kind: 'text_only', text: 'Hello Ada,\nline two.\n.\nA dot line above.' },
    });
    assert.equal(data.html, null);
    assert.match(data.text, /line two\.\r?\n\.\r?\nA dot line above\./);
    assert.ok(data.headers.some((header: { name: string }) => header.name === 'DKIM-Signature'));
  });

  it('text and HTML with attachments (binary, non-ASCII file name), stored in S3', async () => {
    const pdf = randomBytes(40_000);
    const { data } = await sentAndCompared({
      to: ['ada@content.test'],
      cc: ['grace@content.test'],
      subject: 'Invoice',
      content: { kind: 'mixed', text: 'See the attachments.', html: '<p>See the <b>attachments</b>.</p>' },
      attachments: [
        { filename: 'Rechnung März.pdf', content_type: 'application/pdf', content: pdf.toString('base64') },
        {
          filename: 'notes.txt',
          content_type: 'text/plain',
          content: Buffer.from('ünïcode notes').toString('base64'),
        },
      ],
    });
    assert.equal(data.attachments.length, 2);
    assert.equal(data.attachments[0].filename, 'Rechnung März.pdf');
    assert.ok((await download(data.attachments[0].url)).bytes.equals(pdf));
    assert.match(data.html, /<b>attachments<\/b>/);
  });

  it('a large HTML-only body (bodies in S3): the HTML as wrapped and the derived text', async () => {
    const rows = Array.from(
      { length: 400 },
      (_, n) => `<tr><td>line ${n} ${randomUUID()}</td><td>${(n * 7.31).toFixed(2)} EUR</td></tr>`,
    ).join('');
    const { data } = await sentAndCompared({
      to: ['ada@content.test'],
      subject: 'Large order',
      content: { kind: 'html_only', html: `<table>${rows}</table>` },
    });
    assert.match(data.html, /^<!DOCTYPE html>/);
    assert.match(data.text, /line 399/);
  });

  it('a message rendered from a template with a layout: the rendered content as delivered', async () => {
    const alias = `receipt-${randomUUID().slice(0, 8)}`;
    await templateData(sending, 'add', {
      alias: `${alias}-frame`,
      name: 'Frame',
      subject: '',
      html: '<html><body><header>Shop</header>{{{@content}}}<footer>Bye</footer></body></html>',
      text: '{{{@content}}}\n-- \nShop',
    });
    await templateData(sending, 'publish', { alias: `${alias}-frame` });
    await templateData(sending, 'add', {
      alias,
      name: 'Receipt',
      layout_alias: `${alias}-frame`,
      subject: 'Receipt {{order}} für {{name}}',
      html: '<p>Thanks, {{name}}</p><ul>{{#each items}}<li>{{title}}</li>{{/each}}</ul>',
      text: 'Thanks, {{name}}: {{#each items}}{{title}}; {{/each}}',
    });
    await templateData(sending, 'publish', { alias });
    const { data } = await sentAndCompared({
      to: ['ada@content.test'],
      template: {
        alias,
        model: { order: 'A-17', name: 'Ada & <Co>', items: [{ title: 'tea' }, { title: 'cups' }] },
      },
    });
    assert.equal(data.subject, 'Receipt A-17 für Ada & <Co>');
    assert.match(
      data.html,
      /<header>Shop<\/header><p>Thanks, Ada &amp; &lt;Co&gt;<\/p><ul><li>tea<\/li><li>cups<\/li><\/ul><footer>Bye<\/footer>/,
    );
    assert.match(data.text, /tea; cups; \r?\n-- \r?\nShop/);
  });

  it('an EML with its own attachment', async () => {
    const eml = [
      `From: Shop <shop@${sending.domain}>`,
      'To: ada@content.test',
      'Subject: =?utf-8?q?EML_=C3=BCber_alles?=',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The EML body.',
      '--b1',
      'Content-Type: application/octet-stream',
      'Content-Disposition: attachment; filename="data.bin"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from([0, 1, 2, 254, 255]).toString('base64'),
      '--b1--',
      '',
    ].join('\n');
    const { data } = await sentAndCompared({
      content: { kind: 'eml', eml: Buffer.from(eml).toString('base64') },
    });
    assert.equal(data.subject, 'EML über alles');
    assert.equal(data.attachments[0].filename, 'data.bin');
    assert.ok((await download(data.attachments[0].url)).bytes.equals(Buffer.from([0, 1, 2, 254, 255])));
  });

  it('a held message shows what will be composed, unsigned, as a preview; sent later, its parts are what it shows', async () => {
    const body = {
      message_sender: `shop@${sending.domain}`,
      to: ['ada@content.test'],
      subject: 'Held',
      content: { kind: 'mixed', text: 'held text', html: '<p>held html</p>' },
      attachments: [
        { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('a').toString('base64') },
      ],
      scheduling: { mode: 'manual-wait' },
    };
    const { uuid } = await addMessage(sending.token, body);
    const before = await content(sending.token, uuid);
    assert.equal(before.status, 200, before.text);
    assert.equal(before.body.data.preview, true);
    // Never sent, so never signed: no DKIM-Signature in the answer or in the .eml.
    const preview = await download(before.body.data.raw_url);
    assert.doesNotMatch(preview.bytes.toString('latin1'), /^DKIM-Signature:/im);
    assert.ok(!before.body.data.headers.some((header: { name: string }) => header.name === 'DKIM-Signature'));
    const release = await call('POST', '/message/add-1.0', {
      token: sending.token,
      body: { scheduling: { mode: 'manual-send', message_uuid: uuid } },
    });
    assert.equal(release.status, 200, release.text);
    await waitForStatus(sending.token, uuid, ['delivered']);
    const sent = await PostalMime.parse(outboxEml(uuid) as Buffer);
    assert.equal(before.body.data.text, sent.text);
    assert.equal(before.body.data.html, sent.html);
    assert.equal(before.body.data.attachments[0].size, 1);
    const after = await content(sending.token, uuid);
    assert.equal(after.body.data.preview, false);
    assert.ok(after.body.data.headers.some((header: { name: string }) => header.name === 'DKIM-Signature'));
  });

  it('a cancelled message is a preview, unsigned', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `shop@${sending.domain}`,
      to: ['ada@content.test'],
      content: { kind: 'text_only', text: 'never sent' },
      scheduling: { mode: 'manual-wait' },
    });
    const cancel = await call('POST', '/message/add-1.0', {
      token: sending.token,
      body: { scheduling: { mode: 'manual-cancel', message_uuid: uuid } },
    });
    assert.equal(cancel.status, 200, cancel.text);
    const answer = await content(sending.token, uuid);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.data.preview, true);
    assert.doesNotMatch(
      (await download(answer.body.data.raw_url)).bytes.toString('latin1'),
      /^DKIM-Signature:/im,
    );
  });

  it('deleting a message removes what the content route stored for download', async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `shop@${sending.domain}`,
      to: ['ada@content.test'],
      content: { kind: 'text_only', text: 'to delete' },
      attachments: [
        { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from('a').toString('base64') },
      ],
      scheduling: { mode: 'manual-wait' },
    });
    assert.equal((await content(sending.token, uuid)).status, 200);
    const keys = [objectKeys.download(uuid, 0), objectKeys.download(uuid, 1)];
    for (const key of keys) assert.ok(await objectExists(key), key);
    const removed = await call('POST', '/message/delete-1.0', {
      token: sending.token,
      body: { message_uuids: [uuid] },
    });
    assert.deepEqual(removed.body.data.deleted, [uuid]);
    for (const key of keys) assert.equal(await objectExists(key), false, key);
  });
});

describe('who may read content', () => {
  const held = async (text: string) =>
    (
      await addMessage(sending.token, {
        message_sender: `shop@${sending.domain}`,
        to: ['ada@content.test'],
        content: { kind: 'text_only', text },
        scheduling: { mode: 'manual-wait' },
      })
    ).uuid;

  it('an unknown or foreign uuid is 112', async () => {
    const uuid = await held('mine');
    const stranger = await mintToken({ account: uniqueAccount('stranger') });
    for (const [token, id] of [
      [stranger, uuid],
      [sending.token, randomUUID()],
    ] as const) {
      const answer = await content(token, id);
      assert.equal(answer.status, 404, answer.text);
      assert.equal(answer.body.error.code, 112);
    }
  });

  it('a token without messages:read_content is 113, while messages:read still queries', async () => {
    const uuid = await held('private');
    const readOnly = await mintToken({ account: sending.account, scopes: ['messages:read'] });
    const refused = await content(readOnly, uuid);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.error.code, 113);
    assert.equal((await queryMessage(readOnly, uuid)).message_uuid, uuid);
  });
});

describe('recipient events in query by uuid', () => {
  it("a bounce carries the recipient server's SMTP reply; the delivered recipient was sent, then delivered", async () => {
    const { uuid } = await addMessage(sending.token, {
      message_sender: `shop@${sending.domain}`,
      to: ['bounce-events@content.test', 'fine-events@content.test'],
      content: { kind: 'text_only', text: 'one bounces' },
    });
    const message = await waitForStatus(sending.token, uuid, ['bounced']);
    const [bounced, fine] = message.recipients;
    assert.deepEqual(
      bounced.events.map((event: { status: string }) => event.status),
      ['bounced'],
    );
    assert.match(bounced.events[0].response, /^550 5\.1\.1 Recipient address rejected/);
    assert.deepEqual(
      fine.events.map((event: { status: string }) => event.status),
      ['sent', 'delivered'],
    );
    assert.match(fine.events[1].response, /^250 /);
    for (const event of [...bounced.events, ...fine.events]) assert.match(event.at, /[+-]\d{2}:\d{2}$/);
  });
});
