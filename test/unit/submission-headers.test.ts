import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { controlFields, isRemovedHeader } from '../../submission/control-headers.ts';
import { requestBodyOf, submissionOf } from '../../submission/message-body.ts';
import { headerFields, withoutHeaders } from '../../submission/message-headers.ts';
import { replyForApiError } from '../../submission/smtp-replies.ts';

const raw = Buffer.from(
  'From: a@x.test\r\nTo: B <b@y.test>\r\nBcc: hidden@y.test,\r\n other@y.test\r\nX-Svc-Tags: kind=welcome, flag\r\n' +
    'X-Svc-Metadata-Order: =?utf-8?q?47=C3=A4?=\r\nX-Svc-Track-Opens: yes\r\nSubject: folded\r\n line\r\n\r\nBody\r\nBcc: not a header\r\n',
);

describe('submission headers', () => {
  it('removes Bcc (with its continuation) and X-Svc-* and keeps every other byte', () => {
    const kept = withoutHeaders(raw, isRemovedHeader).toString();
    assert.equal(
      kept,
      'From: a@x.test\r\nTo: B <b@y.test>\r\nSubject: folded\r\n line\r\n\r\nBody\r\nBcc: not a header\r\n',
    );
  });

  it('reads control headers, decoded', () => {
    const control = controlFields(headerFields(raw));
    assert.deepEqual(control.tags, [
      { name: 'kind', value: 'welcome' },
      { name: 'flag', value: '' },
    ]);
    assert.deepEqual(control.metadata, { order: '47ä' });
    assert.deepEqual(control.tracking, { opens: true });
  });

  it('sorts envelope recipients into to, cc and bcc by the headers', () => {
    const { body } = submissionOf(raw, 'a@x.test', ['b@y.test', 'hidden@y.test', 'env@z.test']);
    assert.deepEqual(body.to, ['b@y.test']);
    assert.deepEqual(body.bcc, ['hidden@y.test', 'env@z.test']);
    assert.equal(body.cc, undefined);
  });

  it('writes the request as JSON with the message in base64, whatever its length or the metadata', () => {
    for (const size of [0, 1, 2, 3, 49_151, 49_152, 49_153, 200_000]) {
      const eml = Buffer.from(Array.from({ length: size }, (_, i) => (i * 7) % 256));
      const body = { message_sender: 'a@x.test', to: ['b@y.test'], metadata: { eml: '', note: '"eml":""' } };
      const parsed = JSON.parse(requestBodyOf({ body, eml }).toString('utf8'));
      assert.deepEqual(parsed, { content: { kind: 'eml', eml: eml.toString('base64') }, ...body });
    }
  });

  it('maps API codes to SMTP replies', () => {
    assert.equal(replyForApiError({ code: 115, message: 'Too many requests' }).responseCode, 451);
    assert.equal(replyForApiError({ code: 4, message: 'db' }).responseCode, 451);
    assert.equal(replyForApiError({ code: 113, message: 'acl' }).message.startsWith('5.7.1 code 113'), true);
    assert.equal(replyForApiError({ code: 10000001, message: 'Invalid e-mail address' }).responseCode, 553);
    const bad = replyForApiError({
      code: 107,
      message: 'Input parameter errors',
      details: [{ field: 'to', message: 'x' }],
    });
    assert.equal(bad.responseCode, 550);
    assert.match(bad.message, /code 107: Input parameter errors \(to: x\)/);
  });
});
