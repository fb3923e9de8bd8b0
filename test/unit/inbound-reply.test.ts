import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { replyParseLimit, strippedTextReply } from '../../shared/inbound/model/reply.ts';

/**
 * `stripped_text_reply` on the reply formats of real mail clients (test/fixtures/replies/SOURCE.md):
 * what the person wrote, without the attribution line, the quoted message and the signature.
 */
const fixtures = join(import.meta.dirname, '..', 'fixtures', 'replies');
const expected: Record<string, string> = {
  'gmail.txt': "Thanks, that works for me. I'll pick it up on Friday.\n\nBob",
  'gmail-wrapped.txt': 'Yes, go ahead.',
  'gmail-fr.txt': "Merci, c'est parfait.",
  'gmail-de.txt': 'Danke, passt so.',
  // The closing ("Best regards, Bob") above Outlook's header block goes with the quote.
  'outlook.txt': 'Sounds good, please ship it.',
  'outlook-original-message.txt': 'Please cancel it.',
  'outlook-mobile.txt': 'On my way.',
  'apple-mail-iphone.txt': 'Perfect, thank you!',
  'apple-mail-macos.txt': "I'll be there at noon.",
  'thunderbird.txt': 'See you then.',
  'yahoo.txt': 'Got it, thanks.',
  'signature-only.txt': 'The invoice is attached.',
};

describe('stripped_text_reply on real client formats', () => {
  it('has an expectation for every fixture, and at least 8 of them', () => {
    const files = readdirSync(fixtures).filter((name) => name.endsWith('.txt'));
    assert.deepEqual(files.sort(), Object.keys(expected).sort());
    assert.ok(files.length >= 8);
  });

  for (const [file, reply] of Object.entries(expected)) {
    it(file, () => {
      assert.equal(strippedTextReply(readFileSync(join(fixtures, file), 'utf8')), reply);
    });
  }

  it('keeps a message without quote or signature as it is (trimmed)', () => {
    assert.equal(strippedTextReply('\nJust a note.\nSecond line.\n\n'), 'Just a note.\nSecond line.');
  });

  it('reads only the first 16 KB, cut at a line end, so a hostile message cannot stall it', () => {
    const line = `${'word '.repeat(20)}\n`;
    const text = line.repeat(Math.ceil((replyParseLimit * 4) / line.length));
    const stripped = strippedTextReply(text);
    assert.ok(stripped.length <= replyParseLimit, `${stripped.length} characters`);
    // Whole lines only: the last one is complete.
    assert.match(stripped, /^(word ){19}word$/m);
    assert.match(stripped, /word$/);
  });
});
