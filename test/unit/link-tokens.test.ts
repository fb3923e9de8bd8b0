import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openIndexedLinkToken,
  openLinkToken,
  resetLinkKeys,
  sealIndexedLinkTokens,
  sealLinkToken,
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

  const derived = (info: string) =>
    Buffer.from(
      hkdfSync(
        'sha256',
        Buffer.from(process.env.LINK_TOKEN_KEY as string, 'base64'),
        Buffer.alloc(0),
        info,
        32,
      ),
    );
  const syntheticSeal = (key: Buffer, aad: string, payload: Buffer) => {
    const iv = createHmac('sha256', key).update('synthetic-iv').update(payload).digest().subarray(0, 12);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
    cipher.setAAD(Buffer.from(aad));
    const sealed = Buffer.concat([cipher.update(payload), cipher.final()]);
    return Buffer.concat([iv, sealed, cipher.getAuthTag()]);
  };

  it('a stable token is the synthetic-IV AES-GCM seal of docs/tracking.md', async () => {
    const key = derived('link-token:click');
    for (const payload of Array.from({ length: 40 }, (_, index) => randomBytes(1 + index))) {
      const token = await sealLinkToken('click', payload, { stable: true });
      const reference = Buffer.concat([Buffer.from([1]), syntheticSeal(key, 'click', payload)]);
      expect(token).toBe(reference.toString('base64url'));
      expect(await openLinkToken('click', token)).toEqual(payload);
    }
  });

  it('indexed tokens are one seal, the index and its HMAC, as docs/tracking.md lays them out', async () => {
    const payload = randomBytes(18);
    const tokens = await sealIndexedLinkTokens('click', payload, 300);
    const sealed = syntheticSeal(derived('link-token:click'), 'click:indexed', payload);
    const macKey = derived('link-token:click:index-mac');
    for (const [index, token] of tokens.entries()) {
      const signed = Buffer.concat([Buffer.from([2]), sealed, Buffer.from([index >> 8, index & 0xff])]);
      const mac = createHmac('sha256', macKey).update(signed).digest().subarray(0, 10);
      expect(token).toBe(Buffer.concat([signed, mac]).toString('base64url'));
      expect(await openIndexedLinkToken('click', token)).toEqual({ payload, index });
      expect(await openLinkToken('click', token)).toBeUndefined();
    }
    expect(await sealIndexedLinkTokens('click', payload, 300)).toEqual(tokens);
    expect(await sealIndexedLinkTokens('click', payload, 0)).toEqual([]);
    await expect(sealIndexedLinkTokens('click', payload, 0x10000)).rejects.toThrow(/65,535/);
  });

  it('an indexed token with another index, a changed byte, another purpose or its seal alone does not open', async () => {
    const payload = randomBytes(18);
    const [token] = await sealIndexedLinkTokens('click', payload, 1);
    const bytes = Buffer.from(token as string, 'base64url');
    const reindexed = Buffer.from(bytes);
    reindexed.writeUInt16BE(7, bytes.length - 12);
    expect(await openIndexedLinkToken('click', reindexed.toString('base64url'))).toBeUndefined();
    for (let at = 0; at < bytes.length; at++) {
      const changed = Buffer.from(bytes);
      changed[at] = (changed[at] as number) ^ 0x01;
      expect(await openIndexedLinkToken('click', changed.toString('base64url'))).toBeUndefined();
    }
    expect(await openIndexedLinkToken('open', token as string)).toBeUndefined();
    // The seal inside, re-labelled as a single token, is refused: its associated data differs.
    const single = Buffer.concat([Buffer.from([1]), bytes.subarray(1, bytes.length - 12)]);
    expect(await openLinkToken('click', single.toString('base64url'))).toBeUndefined();
    expect(
      await openIndexedLinkToken('click', await sealLinkToken('click', payload, { stable: true })),
    ).toBeUndefined();
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
