import { Parser } from 'htmlparser2';

/**
 * The links of an HTML part that click tracking follows, found with htmlparser2's tokenizer (one
 * linear pass, no backtracking over the markup): the `href` of every `<a>` and `<area>` whose
 * value is an `http:` or `https:` URL, in document order, except links marked
 * `data-svc-track="off"` and links under `excludedPrefix` (the one-click unsubscribe URL). The
 * same pass at compose time (rewriting) and at click time (the target of link `n`) numbers the
 * links alike, so a click token names its link by index and the target is read from the stored
 * message, never from the token or the request.
 */
export interface TrackableLink {
  /** The URL as a browser follows it (entities decoded, surrounding whitespace removed). */
  url: string;
  /** Where the `href` attribute (name to closing quote) is in the source. */
  start: number;
  end: number;
}

interface AttributeSpan {
  name: string;
  /** The value as written (entities not decoded). */
  value: string;
  quote: string | null | undefined;
  start: number;
  end: number;
}

export interface HtmlScan {
  links: TrackableLink[];
  /** `data-svc-track` attributes, to remove from what is sent. */
  markers: Array<{ start: number; end: number }>;
  /** Where `</body>` starts; undefined when the part has none. */
  bodyEnd?: number;
}

const linkElements = new Set(['a', 'area']);

export function scanHtml(html: string, excludedPrefix: string): HtmlScan {
  const scan: HtmlScan = { links: [], markers: [] };
  let attributes: AttributeSpan[] = [];
  let inLink = false;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        attributes = [];
        inLink = linkElements.has(name);
      },
      onattribute(name, value, quote) {
        // Only a link's attributes matter: the others (every style of the part) are not kept.
        if (inLink) attributes.push({ name, value, quote, start: parser.startIndex, end: parser.endIndex });
      },
      onopentag(name) {
        if (!linkElements.has(name)) return;
        const marker = attributes.find((attribute) => attribute.name === 'data-svc-track');
        if (marker !== undefined) scan.markers.push(attributeWithSpace(html, marker));
        const href = attributes.find((attribute) => attribute.name === 'href');
        if (href === undefined || (marker !== undefined && decoded(marker).trim().toLowerCase() === 'off'))
          return;
        const url = decoded(href).trim();
        if (!/^https?:\/\//i.test(url) || url.startsWith(excludedPrefix)) return;
        scan.links.push({ url, start: href.start, end: href.end });
      },
      onclosetag(name, implied) {
        if (name === 'body' && !implied && scan.bodyEnd === undefined) scan.bodyEnd = parser.startIndex;
      },
    },
    // Entities are decoded only in the few attribute values read (decoded below), not in the text.
    { decodeEntities: false, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  return scan;
}

/**
 * An attribute value as a browser reads it: the raw value decoded by htmlparser2's own attribute
 * decoder, by parsing it again alone inside the same quotes.
 */
function decoded(attribute: AttributeSpan): string {
  if (!attribute.value.includes('&')) return attribute.value;
  const quote = attribute.quote ?? '';
  let value = '';
  const decoder = new Parser(
    {
      onattribute(_name, decodedValue) {
        value = decodedValue;
      },
    },
    { decodeEntities: true },
  );
  decoder.end(`<a v=${quote}${attribute.value}${quote}>`);
  return value;
}

/** The attribute's span with the whitespace before it, so removing it leaves the tag tidy. */
function attributeWithSpace(html: string, attribute: AttributeSpan): { start: number; end: number } {
  let start = attribute.start;
  while (start > 0 && /\s/.test(html[start - 1] as string)) start -= 1;
  return { start, end: attribute.end };
}

/** The trackable links' URLs, in the order their tokens number them. */
export const trackableLinks = (html: string, excludedPrefix: string): string[] =>
  scanHtml(html, excludedPrefix).links.map((link) => link.url);
