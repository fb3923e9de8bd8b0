import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'vitest';
import {
  compressionCeiling,
  contentItemLimit,
  planContent,
  unpackBodies,
} from '../../shared/messages/model/message.ts';

const uuid = '5f0c4f2e-2f59-4a39-9a53-0d6f1b7c9e11';

/** Prose that does not repeat itself (a repeated paragraph would compress unrealistically well). */
function prose(bytes: number): string {
  const words = 'order parcel invoice account reset password delivery address team support receipt'.split(
    ' ',
  );
  let seed = 7;
  let text = '';
  while (text.length < bytes) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    text += `${words[seed % words.length]}${seed % 7 === 0 ? '. ' : ' '}${seed % 1000} `;
  }
  return text.slice(0, bytes);
}

describe('where a new message keeps its bodies', () => {
  it('compresses small bodies into the content item and gives them back byte for byte', () => {
    const text = `Hello Ada — ${prose(900)}`;
    const html = `<p>Hello <b>Ada</b> — ${prose(1200)}</p>`;
    const planned = planContent(uuid, { text, html, attachments: [] });
    assert.deepEqual(planned.content, { store: 'item' });
    assert.ok(planned.bodies !== undefined && planned.object === undefined);
    assert.ok(planned.bodies.z.length < Buffer.byteLength(text) + Buffer.byteLength(html));
    const back = unpackBodies(planned.bodies);
    assert.equal(back.text?.toString('utf8'), text);
    assert.equal(back.html?.toString('utf8'), html);
    assert.equal(back.eml, undefined);
  });

  it('keeps an EML in the item too, as bytes', () => {
    const eml = Buffer.from(`From: a@example.com\r\nSubject: x\r\n\r\n${prose(2000)}\r\n`);
    const planned = planContent(uuid, { eml, attachments: [] });
    assert.ok(planned.bodies !== undefined);
    assert.deepEqual(unpackBodies(planned.bodies).eml, eml);
  });

  it('decides on the compressed size: large HTML that compresses below the limit stays in the item', () => {
    const html = `<table>${Array.from({ length: 300 }, (_, row) => `<tr><td style="padding:4px">${row}</td><td>${prose(40)}</td></tr>`).join('')}</table>`;
    assert.ok(Buffer.byteLength(html) > 3 * contentItemLimit);
    const planned = planContent(uuid, { html, attachments: [] });
    assert.ok(planned.bodies !== undefined, 'compressed into the item');
    assert.ok(planned.bodies.z.length <= contentItemLimit);
  });

  it('uses the S3 object for bodies that do not compress below the limit, for attachments, and above the ceiling', () => {
    const noise = randomBytes(contentItemLimit + 512).toString('latin1');
    assert.equal(planContent(uuid, { text: noise, attachments: [] }).content.store, 's3');
    const attached = planContent(uuid, {
      text: 'hi',
      attachments: [{ filename: 'a.txt', content_type: 'text/plain', body: Buffer.from('a') }],
    });
    assert.equal(attached.content.store, 's3');
    assert.ok(attached.object !== undefined && attached.bodies === undefined);
    const huge = 'a'.repeat(compressionCeiling + 1);
    assert.equal(planContent(uuid, { text: huge, attachments: [] }).content.store, 's3');
  });
});
