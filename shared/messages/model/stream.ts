/**
 * Message streams (docs/streams.md): `transactional` mail (receipts, password resets) and
 * `broadcast` mail (newsletters, digests), which gets the one-click unsubscribe of RFC 8058. Pure
 * rules of what a message may ask for; the delivery wing adds the headers and the link.
 */
export const messageStreams = ['transactional', 'broadcast'] as const;
export type MessageStream = (typeof messageStreams)[number];

/** The placeholder a body or template writes where the unsubscribe link goes (replaced when sent). */
export const unsubscribePlaceholder = '{{{unsubscribe_url}}}';

/** The stream of a stored message: items without one (and all before streams) are transactional. */
export const streamOf = (message: { stream?: MessageStream }): MessageStream =>
  message.stream ?? 'transactional';

/**
 * A `List-Id` value (RFC 2919): an optional phrase, then `<list-label.list-id-namespace>`, a dot-atom
 * of at most 255 characters. The phrase is printable ASCII without `<`, `>` or line breaks.
 */
const listIdPattern =
  /^(?:[\x20-\x3b=\x3f-\x7e]{0,200}\s)?<[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)+>$/;

/** Why `value` is not a valid List-Id, or undefined when it is. */
export function listIdProblem(value: string): string | undefined {
  if (value.length > 300) return 'list_id is at most 300 characters';
  const match = /<([^>]*)>$/.exec(value);
  if (!listIdPattern.test(value) || match === null || (match[1] as string).length > 255) {
    return 'list_id must be a List-Id value (RFC 2919): an optional name, then <label.namespace>, e.g. "Weekly news <weekly.news.example.com>"';
  }
  return undefined;
}

/** Whether a body or rendered template asks for the unsubscribe link itself. */
export const hasUnsubscribePlaceholder = (text: string | undefined): boolean =>
  text?.includes(unsubscribePlaceholder) === true;
