import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'vitest';
import * as libmimeAlias from '../../infra/bundle-aliases/libmime.ts';

// libmime as mailauth, whose signer the alias serves, resolves it.
const libmime = createRequire(createRequire(import.meta.url).resolve('mailauth'))('libmime') as {
  foldLines(text: string, lineLength?: number, afterSpace?: boolean): string;
};

// The bundles replace libmime with nodemailer's foldLines (infra/bundling.ts); it must fold as libmime does.
describe('bundle aliases', () => {
  const signature = (tags: string) => `DKIM-Signature: ${tags}`;
  const samples = [
    signature('v=1; a=rsa-sha256; c=relaxed/relaxed; d=example.com; s=s1; t=1763900000;'),
    signature(
      'v=1; a=rsa-sha256; c=relaxed/relaxed; d=mail.example.com; q=dns/txt; s=svc-2026; t=1763900000; h=From:From:To:Subject:Date:Message-ID:MIME-Version:Content-Type:Feedback-ID; bh=47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=',
    ),
    signature(`b=${'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/'.repeat(12)}`),
    signature(`i=@${'sub.'.repeat(30)}example.com; ${'x '.repeat(60)}`),
    signature('a=ed25519-sha256; d=exämple.com; s=sel; bh=; b='),
    '',
    'short',
  ];

  it('libmime: nodemailer folds every DKIM-Signature shape exactly as libmime does', () => {
    for (const text of samples) {
      assert.equal(libmimeAlias.foldLines(text), libmime.foldLines(text), text.slice(0, 60));
      for (const [length, afterSpace] of [
        [76, false],
        [76, true],
        [40, true],
        [998, false],
      ] as const) {
        assert.equal(
          libmimeAlias.foldLines(text, length, afterSpace),
          libmime.foldLines(text, length, afterSpace),
          `${length} ${afterSpace} ${text.slice(0, 40)}`,
        );
      }
    }
  });

  it('libmime: the alias folds long lines (the test above compares real folding)', () => {
    assert.ok(libmimeAlias.foldLines(samples[2] as string).includes('\r\n'));
  });
});
