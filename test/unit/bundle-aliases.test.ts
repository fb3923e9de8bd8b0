import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'vitest';
import * as encodingJapanese from '../../infra/bundle-aliases/encoding-japanese.ts';
import * as iconvAlias from '../../infra/bundle-aliases/iconv-lite.ts';

// iconv-lite as libmime, which the alias stands in for, resolves it.
const iconv = createRequire(createRequire(import.meta.url).resolve('libmime'))('iconv-lite') as {
  encode(text: string, charset: string): Buffer;
  decode(bytes: Buffer, charset: string): string;
};

// The bundles replace these packages (infra/bundling.ts); the replacements must answer as they do.
describe('bundle aliases', () => {
  const samples: Array<[string, string]> = [
    ['iso-8859-1', 'Grüße, façade'],
    ['windows-1252', 'Smart “quotes” – €'],
    ['iso-8859-2', 'Zażółć gęślą jaźń'],
    ['shift_jis', '日本語のメール'],
    ['euc-jp', '日本語のメール'],
    ['gbk', '中文邮件'],
    ['big5', '中文郵件'],
    ['euc-kr', '한국어 메일'],
    ['koi8-r', 'Привет'],
  ];

  it('iconv-lite: decodes legacy charsets exactly as iconv-lite does', () => {
    for (const [charset, text] of samples) {
      const bytes = iconv.encode(text, charset);
      assert.equal(iconvAlias.decode(bytes, charset), iconv.decode(bytes, charset), charset);
      assert.equal(iconvAlias.decode(bytes, charset), text, charset);
    }
  });

  it('iconv-lite: also decodes ISO-2022-JP, for which libmime asks encoding-japanese first', () => {
    const bytes = Buffer.from('1b2442467c4b5c386c1b2842', 'hex');
    assert.equal(iconvAlias.decode(bytes, 'ISO-2022-JP'), '日本語');
  });

  it('iconv-lite: an unknown charset throws, as iconv-lite does (libmime then falls back to UTF-8)', () => {
    assert.throws(() => iconv.decode(Buffer.from('x'), 'x-no-such-charset'));
    assert.throws(() => iconvAlias.decode(Buffer.from('x'), 'x-no-such-charset'));
    assert.equal(iconvAlias.encodingExists('x-no-such-charset'), false);
    assert.equal(iconvAlias.encodingExists('Shift_JIS'), true);
  });

  it('encoding-japanese: defers to the TextDecoder path', () => {
    assert.throws(() => encodingJapanese.convert());
  });
});
