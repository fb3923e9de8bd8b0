import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openLinkToken,
  resetLinkKeys,
  sealLinkToken,
  sealLinkTokens,
} from '../../shared/platform/tokens/link-tokens.ts';

describe('link tokens', () => {
  beforeEach(() => {
    process.env.LINK_TOKEN_KEY = randomBytes(32).toString('base64');
    resetLinkKeys();
  });
  afterEach(() => {
    delete process.env.LINK_TOKEN_KEY;
    resetLinkKeys();
  });

  it('opens what it sealed, and the token shows nothing of the payload', async () => {
    const payload = Buffer.from('account-1\u0000ada@example.com');
    const token = await sealLinkToken('unsubscribe', payload);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(token, 'base64url').includes(Buffer.from('ada'))).toBe(false);
    expect(await openLinkToken('unsubscribe', token)).toEqual(payload);
  });

  it('a stable token is the synthetic-IV AES-GCM seal of docs/tracking.md, one by one or in a batch', async () => {
    const master = Buffer.from(process.env.LINK_TOKEN_KEY as string, 'base64');
    const key = Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), 'link-token:click', 32));
    const reference = (payload: Buffer) => {
      const iv = createHmac('sha256', key).update('synthetic-iv').update(payload).digest().subarray(0, 12);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
      cipher.setAAD(Buffer.from('click'));
      const sealed = Buffer.concat([cipher.update(payload), cipher.final()]);
      return Buffer.concat([Buffer.from([1]), iv, sealed, cipher.getAuthTag()]).toString('base64url');
    };
    const payloads = Array.from({ length: 40 }, (_, index) => randomBytes(1 + index));
    const batch = await sealLinkTokens('click', payloads, { stable: true });
    expect(batch).toEqual(payloads.map(reference));
    for (const [index, payload] of payloads.entries()) {
      expect(await sealLinkToken('click', payload, { stable: true })).toBe(batch[index]);
      expect(await openLinkToken('click', batch[index] as string)).toEqual(payload);
    }
  });

  it('two seals of one payload differ', async () => {
    const payload = Buffer.from('same');
    expect(await sealLinkToken('open', payload)).not.toBe(await sealLinkToken('open', payload));
  });

  it('a stable seal is the same for one payload, different for another, and opens', async () => {
    const one = await sealLinkToken('click', Buffer.from('one'), { stable: true });
    expect(await sealLinkToken('click', Buffer.from('one'), { stable: true })).toBe(one);
    expect(await sealLinkToken('click', Buffer.from('two'), { stable: true })).not.toBe(one);
    expect(await openLinkToken('click', one)).toEqual(Buffer.from('one'));
  });

  it('refuses a token of another purpose', async () => {
    const token = await sealLinkToken('click', Buffer.from('x'));
    expect(await openLinkToken('open', token)).toBeUndefined();
  });

  it('refuses every single-character change', async () => {
    const token = await sealLinkToken('unsubscribe', Buffer.from('payload'));
    for (let index = 0; index < token.length; index += 1) {
      const changed = token.slice(0, index) + (token[index] === 'A' ? 'B' : 'A') + token.slice(index + 1);
      expect(await openLinkToken('unsubscribe', changed)).toBeUndefined();
    }
  });

  it('refuses a token sealed under another key', async () => {
    const token = await sealLinkToken('unsubscribe', Buffer.from('payload'));
    process.env.LINK_TOKEN_KEY = randomBytes(32).toString('base64');
    resetLinkKeys();
    expect(await openLinkToken('unsubscribe', token)).toBeUndefined();
  });

  it('refuses malformed input without throwing', async () => {
    for (const token of ['', '!!!', 'a'.repeat(5000), 'AQ', Buffer.alloc(29).toString('base64url')]) {
      expect(await openLinkToken('unsubscribe', token)).toBeUndefined();
    }
  });
});
