import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { simpleParser } from 'mailparser';
import { describe, it } from 'vitest';
import { requestLimits } from '../../shared/platform/http/limits.ts';
import { outboxEml, waitForStatus } from '../support/delivery.ts';
import { call } from '../support/host.ts';
import { add, newAccount, textMessage } from '../support/messages.ts';

/** The exact size of the JSON body `body` is sent as. */
const bodyBytes = (body: unknown) => Buffer.byteLength(JSON.stringify(body));

/** An add body padded with an attachment so that its JSON is exactly `total` bytes. */
function addBodyOfSize(base: Record<string, unknown>, total: number) {
  const withAttachment = (content: string) => ({
    ...base,
    attachments: [{ filename: 'pad.bin', content_type: 'application/octet-stream', content }],
  });
  const overhead = bodyBytes(withAttachment(''));
  const base64Length = Math.floor((total - overhead) / 4) * 4;
  const content = randomBytes((base64Length / 4) * 3).toString('base64');
  const body = withAttachment(content);
  // Top up with spaces in the subject so the JSON is exactly `total` bytes (base64 moves in fours).
  const short = total - bodyBytes(body);
  return { ...body, subject: `${String(base.subject)}${' '.repeat(short)}` };
}

describe('Messages up to the documented 6,000,000-byte body', () => {
  it('accepts, stores, sends and delivers a 4.4 MB attachment byte for byte', async () => {
    const who = await newAccount('big');
    const pdf = randomBytes(4_400_000);
    const response = await add(
      who,
      textMessage(who, {
        subject: 'Invoice',
        attachments: [
          { filename: 'invoice.pdf', content_type: 'application/pdf', content: pdf.toString('base64') },
        ],
      }),
    );
    assert.equal(response.status, 200, response.text.slice(0, 500));
    const uuid = response.body.data.message_uuid;
    const details = await waitForStatus(who.token, uuid, ['delivered']);
    assert.deepEqual(details.attachments, [
      { filename: 'invoice.pdf', content_type: 'application/pdf', size: pdf.length },
    ]);
    const received = await simpleParser(outboxEml(uuid) ?? Buffer.alloc(0));
    assert.equal(received.attachments.length, 1);
    assert.ok(received.attachments[0]?.content.equals(pdf), 'the attachment arrives byte for byte');
  });

  it('delivers a body of 5.9 MB, and answers one byte over the limit with 107', async () => {
    const who = await newAccount('big');
    const body = addBodyOfSize(textMessage(who, { subject: 'Large' }), 5_900_000);
    assert.equal(bodyBytes(body), 5_900_000);
    const response = await add(who, body);
    assert.equal(response.status, 200, response.text.slice(0, 500));
    const uuid = response.body.data.message_uuid;
    await waitForStatus(who.token, uuid, ['delivered']);
    const received = await simpleParser(outboxEml(uuid) ?? Buffer.alloc(0));
    const sent = Buffer.from(body.attachments[0]?.content ?? '', 'base64');
    assert.ok(received.attachments[0]?.content.equals(sent), 'the attachment arrives byte for byte');

    const over = addBodyOfSize(textMessage(who, { subject: 'Too large' }), requestLimits.maxBodyBytes + 1);
    assert.equal(bodyBytes(over), 6_000_001);
    const refused = await add(who, over);
    assert.equal(refused.status, 406);
    assert.equal(refused.body.error.code, 107);
  });

  it('accepts an eml message of 4 MB', async () => {
    const who = await newAccount('big');
    const filler = randomBytes(3_000_000).toString('base64').replace(/.{76}/g, '$&\r\n');
    const eml = [
      `From: ${who.sender}`,
      'To: ada@recipient.test',
      'Subject: Large eml',
      'MIME-Version: 1.0',
      'Content-Type: application/octet-stream',
      'Content-Transfer-Encoding: base64',
      '',
      filler,
    ].join('\r\n');
    assert.ok(eml.length > 4_000_000);
    const response = await call('POST', '/message/add-1.0', {
      token: who.token,
      body: {
        message_sender: who.sender,
        content: { kind: 'eml', eml: Buffer.from(eml).toString('base64') },
        scheduling: { mode: 'manual-wait' },
      },
    });
    assert.equal(response.status, 200, response.text.slice(0, 500));
    assert.equal(response.body.data.status, 'waiting');
  });

  it('answers malformed base64 in a large attachment with 107, and keeps serving', async () => {
    const who = await newAccount('big');
    const content = `${randomBytes(3_000_000).toString('base64')}!`.padEnd(4_000_004, 'A');
    const response = await add(
      who,
      textMessage(who, { attachments: [{ filename: 'x.bin', content_type: 'application/pdf', content }] }),
    );
    assert.equal(response.status, 406);
    assert.equal(response.body.error.code, 107);
    assert.equal(response.body.error.details[0].field, 'attachments[0].content');
    assert.equal((await call('GET', '/health')).status, 200);
  });
});
