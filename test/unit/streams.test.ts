import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import {
  broadcastHeaders,
  htmlWithUnsubscribeLink,
  textWithUnsubscribeLink,
  withoutListHeaders,
} from '../../shared/delivery/mail/broadcast.ts';
import { isOneClickBody } from '../../shared/delivery/unsubscribe/one-click-body.ts';
import { packClaim, unpackClaim } from '../../shared/delivery/unsubscribe/token-payload.ts';
import { listIdProblem } from '../../shared/messages/model/stream.ts';
import { matchRoutePath } from '../../shared/platform/http/route.ts';

const url = 'https://api.example.test/unsubscribe/AbC_d-1';

describe('streams: pure rules', () => {
  it('packs a claim compactly and reads it back; other bytes are no claim', () => {
    const claim = {
      stream: 'broadcast' as const,
      messageUuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
      account: 'acct-ü',
      email: 'Ada@Example.org',
    };
    const packed = packClaim(claim);
    assert.equal(packed.length, 1 + 16 + 2 + Buffer.byteLength('acct-ü') + 'ada@example.org'.length);
    assert.equal(
      Buffer.from(packed).includes(Buffer.from('ada@example.org')),
      true,
      'sealed later, not here',
    );
    assert.deepEqual(unpackClaim(packed), { ...claim, email: 'ada@example.org' });
    assert.equal(unpackClaim(Buffer.from([2, ...packed.subarray(1)])), undefined);
    assert.equal(unpackClaim(packed.subarray(0, 19)), undefined);
  });

  it('List-Id values of RFC 2919', () => {
    for (const good of ['<news.example.com>', 'Weekly news <weekly.news.example.com>', '"Shop" <a.b>'])
      assert.equal(listIdProblem(good), undefined, good);
    for (const bad of [
      'news.example.com',
      '<nodot>',
      'Name <a b.c>',
      'x <a.b> trailing',
      `<${'a'.repeat(256)}.b>`,
    ])
      assert.notEqual(listIdProblem(bad), undefined, bad);
  });

  it('the one-click body: form-encoded or multipart, nothing else', () => {
    assert.equal(isOneClickBody('List-Unsubscribe=One-Click', 'application/x-www-form-urlencoded'), true);
    assert.equal(isOneClickBody('List-Unsubscribe=One-Click\r\n', undefined), true);
    const multipart =
      '--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n';
    assert.equal(isOneClickBody(multipart, 'multipart/form-data; boundary=b'), true);
    for (const bad of [null, '', 'List-Unsubscribe=Yes', 'unsubscribe=One-Click'])
      assert.equal(isOneClickBody(bad, 'application/x-www-form-urlencoded'), false, String(bad));
  });

  it('route paths with {name} segments', () => {
    assert.deepEqual(matchRoutePath('/unsubscribe/{token}', '/unsubscribe/abc'), { token: 'abc' });
    assert.equal(matchRoutePath('/unsubscribe/{token}', '/unsubscribe/'), undefined);
    assert.equal(matchRoutePath('/unsubscribe/{token}', '/unsubscribe/a/b'), undefined);
    assert.deepEqual(matchRoutePath('/health', '/health'), {});
    assert.equal(matchRoutePath('/health', '/healthz'), undefined);
  });

  it("the list headers replace the caller's, and the link goes where the body asks, else in a footer", () => {
    assert.deepEqual(broadcastHeaders(url, 'News <n.example>'), {
      'List-Unsubscribe': `<${url}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      'List-Id': 'News <n.example>',
    });
    assert.deepEqual(withoutListHeaders({ 'list-unsubscribe': '<mailto:x@y>', 'X-Campaign': 'a' }), {
      'X-Campaign': 'a',
    });
    assert.equal(textWithUnsubscribeLink('Bye: {{{unsubscribe_url}}}', url), `Bye: ${url}`);
    assert.equal(textWithUnsubscribeLink('Hello\n\n', url), `Hello\n\n--\nUnsubscribe: ${url}\n`);
    assert.equal(
      htmlWithUnsubscribeLink('<a href="{{{unsubscribe_url}}}">leave</a>', url),
      `<a href="${url}">leave</a>`,
    );
    const footed = htmlWithUnsubscribeLink('<html><body><p>Hi</p></body></html>', url);
    assert.match(
      footed,
      new RegExp(`<p>Hi</p><p [^>]*><a href="${url}">Unsubscribe</a></p>\\n</body></html>$`),
    );
  });
});
