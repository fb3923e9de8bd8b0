import { decodeHTMLAttribute } from 'entities/decode';
import { Tokenizer } from 'htmlparser2';

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

const ignored = () => undefined;

/**
 * Driven by htmlparser2's tokenizer itself, without its Parser: the scan needs no element tree, and
 * the tokens' positions are all it keeps (the Parser's bookkeeping per tag was half the scan's time).
 */
export function scanHtml(html: string, excludedPrefix: string): HtmlScan {
  const scan: HtmlScan = { links: [], markers: [] };
  let attributes: AttributeSpan[] = [];
  let inLink = false;
  let inBody = false;
  let name = '';
  let nameStart = 0;
  let valueStart = -1;
  let valueEnd = -1;
  const endOfOpenTag = () => {
    if (!inLink) return;
    inLink = false;
    const marker = attributes.find((attribute) => attribute.name === 'data-svc-track');
    if (marker !== undefined) scan.markers.push(attributeWithSpace(html, marker));
    const href = attributes.find((attribute) => attribute.name === 'href');
    if (href === undefined || (marker !== undefined && decoded(marker).trim().toLowerCase() === 'off'))
      return;
    const url = decoded(href).trim();
    if (!/^https?:\/\//i.test(url) || url.startsWith(excludedPrefix)) return;
    scan.links.push({ url, start: href.start, end: href.end });
  };
  // Entities are decoded only in the few attribute values read (decoded below), not in the text.
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        attributes = [];
        const tag = html.slice(start, end).toLowerCase();
        inLink = linkElements.has(tag);
        if (tag === 'body') inBody = true;
      },
      // Only a link's attributes matter: the others (every style of the part) are not kept.
      onattribname(start, end) {
        if (!inLink) return;
        name = html.slice(start, end).toLowerCase();
        nameStart = start;
        valueStart = -1;
      },
      onattribdata(start, end) {
        if (!inLink) return;
        if (valueStart < 0) valueStart = start;
        valueEnd = end;
      },
      onattribend(_quote, end) {
        if (!inLink) return;
        const value = valueStart < 0 ? '' : html.slice(valueStart, valueEnd);
        attributes.push({ name, value, start: nameStart, end });
      },
      onopentagend: endOfOpenTag,
      onselfclosingtag: endOfOpenTag,
      onclosetag(start, end) {
        // The first `</body>` that closes an open body; `start` is the name's: the tag begins at `</`.
        if (inBody && scan.bodyEnd === undefined && html.slice(start, end).toLowerCase() === 'body')
          scan.bodyEnd = start - 2;
      },
      onattribentity: ignored,
      oncdata: ignored,
      oncomment: ignored,
      ondeclaration: ignored,
      onend: ignored,
      onprocessinginstruction: ignored,
      ontext: ignored,
      ontextentity: ignored,
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  return scan;
}

/** An attribute value as a browser reads it: entities decoded as in an attribute (the decoder htmlparser2 uses). */
const decoded = (attribute: AttributeSpan): string =>
  attribute.value.includes('&') ? decodeHTMLAttribute(attribute.value) : attribute.value;

/** The attribute's span with the whitespace before it, so removing it leaves the tag tidy. */
function attributeWithSpace(html: string, attribute: AttributeSpan): { start: number; end: number } {
  let start = attribute.start;
  while (start > 0 && /\s/.test(html[start - 1] as string)) start -= 1;
  return { start, end: attribute.end };
}

/** The trackable links' URLs, in the order their tokens number them. */
export const trackableLinks = (html: string, excludedPrefix: string): string[] =>
  scanHtml(html, excludedPrefix).links.map((link) => link.url);
