import { createHash } from 'node:crypto';
import type { Metadata, Tag } from './labels.ts';

/**
 * Search terms: what a message can be found by besides its status and date (docs/data-model.md,
 * "Search entries"). Each recipient address (case-insensitive), each tag pair and each metadata
 * pair of a message is one term; the message writes one small search entry per distinct term, and a
 * filter reads the entries of one term. Pure.
 */
export type TermKind = 'recipient' | 'tag' | 'metadata';

export interface SearchTerm {
  kind: TermKind;
  /** The canonical text: a lower-cased address, or `<name>=<value>` (names never hold `=`). */
  text: string;
}

export const recipientTerm = (email: string): SearchTerm => ({
  kind: 'recipient',
  text: email.trim().toLowerCase(),
});
export const tagTerm = (tag: Tag): SearchTerm => ({ kind: 'tag', text: `${tag.name}=${tag.value}` });
export const metadataTerm = (key: string, value: string): SearchTerm => ({
  kind: 'metadata',
  text: `${key}=${value}`,
});

/** What a message's terms are made of. */
export interface Searchable {
  recipients: ReadonlyArray<{ email: string }>;
  tags?: readonly Tag[];
  metadata?: Metadata;
}

/** Every distinct term of a message: its recipients, then its tags, then its metadata pairs. */
export function termsOf(message: Searchable): SearchTerm[] {
  const terms = [
    ...message.recipients.map((recipient) => recipientTerm(recipient.email)),
    ...(message.tags ?? []).map(tagTerm),
    ...Object.entries(message.metadata ?? {}).map(([key, value]) => metadataTerm(key, value)),
  ];
  const seen = new Set<string>();
  return terms.filter((term) => {
    const id = `${term.kind}:${term.text}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * A term as it appears in a key: 22 base64url characters (132 bits) of the SHA-256 of its kind and
 * text. Fixed length, whatever the term (a metadata value may be 500 characters of UTF-8), so every
 * search entry stays one write unit; and no address is spelled out in a key.
 */
export function termDigest(term: SearchTerm): string {
  return createHash('sha256').update(`${term.kind}:${term.text}`).digest('base64url').slice(0, 22);
}
