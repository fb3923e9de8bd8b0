import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'vitest';
import { type AttachmentStore, parseMessage } from '../../shared/inbound/parse.ts';
import { inboundParseLimits } from '../../shared/inbound/parse-limits.ts';

/** The budget of parsing one received message (docs/security.md, "Limits"), each at its edge. */
const head = 'From: a@sender.test\r\nTo: c@receiver.test\r\nSubject: budget\r\nMIME-Version: 1.0\r\n';

/** A multipart message: a text part and `attachments` one-byte attachments (`attachments + 2` MIME parts). */
function manyParts(attachments: number): Buffer {
  let body = `${head}Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nhi\r\n`;
  for (let index = 0; index < attachments; index++)
    body += `--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="a${index}"\r\n\r\nx\r\n`;
  return Buffer.from(`${body}--b--\r\n`);
}

function htmlOnly(html: string): Buffer {
  const encoded = Buffer.from(html).toString('base64').replace(/.{76}/g, '$&\r\n');
  return Buffer.from(
    `${head}Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${encoded}\r\n`,
  );
}

/** Small chunks, as S3 streams them: the parser hands over attachments while more bytes arrive. */
const chunked = (bytes: Buffer) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / 512) }, (_, index) =>
      bytes.subarray(index * 512, (index + 1) * 512),
    ),
  );

const reading: AttachmentStore = async (index, content) => {
  let size = 0;
  for await (const chunk of content) size += (chunk as Buffer).length;
  return { key: `attachments/${index}`, size };
};

describe('inbound parsing: MIME parts', () => {
  const largest = inboundParseLimits.parts - 2;

  it(`parses a message of ${inboundParseLimits.parts} MIME parts (root, text, ${largest} attachments)`, async () => {
    const parsed = await parseMessage(chunked(manyParts(largest)), reading);
    assert.equal(parsed.parseError, undefined);
    assert.equal(parsed.attachments.length + parsed.attachmentsOmitted, largest);
    assert.equal(parsed.text?.trim(), 'hi');
  });

  it('one part more is a parse error, and the attachment streams still open are ended (it never hangs)', async () => {
    const parsed = await parseMessage(chunked(manyParts(largest + 1)), reading);
    assert.equal(parsed.parseError, `the message has more than ${inboundParseLimits.parts} MIME parts`);
    assert.deepEqual(parsed.attachments, []);
  });

  it("the review's 1,000 one-byte attachments (about 98 KB) end as a parse error, with a store that never finishes on its own", async () => {
    const bytes = manyParts(1000);
    assert.ok(bytes.length < 110_000);
    // A store that waits for the end of its stream, as an upload does.
    const parsed = await parseMessage(chunked(bytes), reading);
    assert.match(parsed.parseError ?? '', /more than 500 MIME parts/);
  });
});

describe('inbound parsing: HTML length', () => {
  const page = (length: number) => `<p>${'a'.repeat(length - 7)}</p>`;

  it(`parses an HTML part of ${inboundParseLimits.htmlLength} characters and derives its text`, async () => {
    const parsed = await parseMessage(chunked(htmlOnly(page(inboundParseLimits.htmlLength))), reading);
    assert.equal(parsed.parseError, undefined);
    assert.equal(parsed.html?.length, inboundParseLimits.htmlLength);
    assert.match(parsed.text ?? '', /^a+/);
  });

  it('one character more is a parse error', async () => {
    const parsed = await parseMessage(chunked(htmlOnly(page(inboundParseLimits.htmlLength + 1))), reading);
    assert.match(parsed.parseError ?? '', /the HTML part has 2097153 characters; at most 2097152/);
    assert.equal(parsed.html, null);
  });

  it("HTML nested past the text conversion's depth is a parse error", async () => {
    const parsed = await parseMessage(chunked(htmlOnly('<div>'.repeat(257))), reading);
    assert.match(parsed.parseError ?? '', /nests elements at most 256 deep/);
  });
});

describe('inbound parsing: deadline', () => {
  it('a message whose bytes stop coming is a parse error at the deadline, its attachment stream ended', async () => {
    // The source sends the start of an attachment, then nothing more and never ends.
    const source = new Readable({ read() {} });
    source.push(
      `${head}Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="slow"\r\n\r\n${'x'.repeat(100_000)}`,
    );
    let storing = 0;
    const parsed = await parseMessage(
      source,
      async (index, content, meta) => {
        storing++;
        return reading(index, content, meta);
      },
      { deadlineMs: 200 },
    );
    assert.equal(parsed.parseError, 'the message was not parsed within 0.2 s');
    assert.equal(storing, 1);
    assert.ok(source.destroyed);
  });

  it('a message parsed within the deadline is not touched by it', async () => {
    const parsed = await parseMessage(chunked(manyParts(3)), reading, { deadlineMs: 60_000 });
    assert.equal(parsed.parseError, undefined);
    assert.equal(parsed.attachments.length, 3);
  });
});

describe('inbound parsing: storage failures are not parse errors', () => {
  it('an attachment that cannot be stored fails the message (the queue retries it), without hanging', async () => {
    await assert.rejects(
      parseMessage(chunked(manyParts(3)), async () => {
        throw new Error('S3 is down');
      }),
      /S3 is down/,
    );
  });
});
