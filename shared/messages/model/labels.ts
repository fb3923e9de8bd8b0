/**
 * Tags and metadata: the labels an application puts on its messages to find them again and to
 * recognise them in webhook events (docs/messages.md, "Tags and metadata"). Both are stored with the
 * message, never change after it is accepted, and are each searchable by one exact pair.
 */

/** `{name, value}`, each 1–256 characters of `A-Z a-z 0-9 _ -`: SES's rule for message tags. */
export interface Tag {
  name: string;
  value: string;
}

/** Up to 10 string values by key (1–40 characters of `A-Z a-z 0-9 _ . -`), each at most 500 characters. */
export type Metadata = Record<string, string>;

export const tagLimits = {
  count: 10,
  length: 256,
  /** The characters (the length, at least 1, is checked on its own, so an empty value is one problem). */
  pattern: /^[A-Za-z0-9_-]*$/,
  characters: 'A-Z a-z 0-9 _ -',
} as const;

export const metadataLimits = {
  count: 10,
  keyLength: 40,
  keyPattern: /^[A-Za-z0-9_.-]*$/,
  keyCharacters: 'A-Z a-z 0-9 _ . -',
  valueLength: 500,
} as const;

/**
 * Tag names the service sets itself: on SES every message carries its uuid as the `message_uuid`
 * tag (the delivery events find the message by it), so a caller's tag may not take that name.
 */
/**
 * The SES message tag the sender sets on every SendEmail call (SES rewrites the Message-ID header),
 * so no tag of a message may take its name.
 */
export const messageUuidTag = 'message_uuid';

export const reservedTagNames: ReadonlySet<string> = new Set([messageUuidTag]);

/** The problems of a tag list beyond each tag's own shape: repeated and reserved names. */
export function tagListProblems(tags: readonly unknown[]): Array<{ index: number; message: string }> {
  const problems: Array<{ index: number; message: string }> = [];
  const seen = new Set<string>();
  tags.forEach((entry, index) => {
    // Tags that are not even `{name: string}` have problems of their own, reported by their schema.
    const tag = entry as Partial<Tag> | null;
    if (typeof tag?.name !== 'string') return;
    if (reservedTagNames.has(tag.name))
      problems.push({ index, message: `The tag name "${tag.name}" is set by the service` });
    else if (seen.has(tag.name))
      problems.push({ index, message: `The tag name "${tag.name}" is given twice; a name appears once` });
    seen.add(tag.name);
  });
  return problems;
}
