/**
 * The deepest nesting of elements an HTML document reaches, in one linear pass that follows the
 * rules of the parser html-to-text uses (htmlparser2): void elements never open, some start tags
 * close the open element first (`<td>` a `<td>`, `<p>` a `<p>` …), an end tag closes everything
 * down to the nearest open element of its name and is ignored when there is none. Comments, the
 * text of raw-text elements and quoted attribute values hold no tags. htmlparser2 itself keeps its
 * open elements in an array it shifts at the front, so its work grows with the square of the depth:
 * the depth is checked here before it runs (./text-from-html.ts).
 */
const voidElements = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const rawTextElements = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'plaintext',
]);

const pTag = ['p'];
const formTags = ['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea'];
const openImpliesClose = new Map<string, ReadonlySet<string>>(
  (
    [
      ['tr', ['tr', 'th', 'td']],
      ['th', ['th']],
      ['td', ['thead', 'th', 'td']],
      ['body', ['head', 'link', 'script']],
      ['li', ['li']],
      ['option', ['option']],
      ['optgroup', ['optgroup', 'option']],
      ['dd', ['dd', 'dt']],
      ['dt', ['dd', 'dt']],
      ['rt', ['rt', 'rp']],
      ['rp', ['rt', 'rp']],
      ['tbody', ['thead', 'tbody']],
      ['tfoot', ['thead', 'tbody']],
      ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((name) => [name, formTags]),
      ...[
        'p',
        'h1',
        'h2',
        'h3',
        'h4',
        'h5',
        'h6',
        'address',
        'article',
        'aside',
        'blockquote',
        'details',
        'div',
        'dl',
        'fieldset',
        'figcaption',
        'figure',
        'footer',
        'form',
        'header',
        'hr',
        'main',
        'nav',
        'ol',
        'pre',
        'section',
        'table',
        'ul',
      ].map((name) => [name, pTag]),
    ] as Array<[string, string[]]>
  ).map(([name, closes]) => [name, new Set(closes)]),
);

const tagStart = /<(!--|\/?)([a-zA-Z][^\s/>]*)?/g;

/** The index just after the `>` that ends the tag whose attributes start at `from` (quotes honoured). */
function tagEnd(html: string, from: number): number {
  let at = from;
  while (at < html.length) {
    const char = html[at];
    if (char === '>') return at + 1;
    if (char === '"' || char === "'") {
      const close = html.indexOf(char, at + 1);
      if (close === -1) return html.length;
      at = close + 1;
    } else at++;
  }
  return html.length;
}

export function maxElementDepth(html: string): number {
  const stack: string[] = [];
  const openByName = new Map<string, number>();
  const pop = () => {
    const name = stack.pop() as string;
    openByName.set(name, (openByName.get(name) as number) - 1);
  };
  let deepest = 0;
  const pattern = new RegExp(tagStart.source, 'g');
  for (let match = pattern.exec(html); match !== null; match = pattern.exec(html)) {
    if (match[1] === '!--') {
      const end = html.indexOf('-->', pattern.lastIndex);
      if (end === -1) break;
      pattern.lastIndex = end + 3;
      continue;
    }
    const name = match[2]?.toLowerCase();
    if (name === undefined) continue;
    pattern.lastIndex = tagEnd(html, pattern.lastIndex);
    if (match[1] === '/') {
      // Each element is popped once, so the search down the stack costs what it pops.
      if ((openByName.get(name) ?? 0) > 0) {
        while (stack[stack.length - 1] !== name) pop();
        pop();
      }
      continue;
    }
    const closes = openImpliesClose.get(name);
    if (closes !== undefined) while (stack.length > 0 && closes.has(stack[stack.length - 1] as string)) pop();
    if (voidElements.has(name)) continue;
    if (rawTextElements.has(name)) {
      const closer = new RegExp(`</${name}`, 'gi');
      closer.lastIndex = pattern.lastIndex;
      if (closer.exec(html) === null) break;
      pattern.lastIndex = closer.lastIndex;
      continue;
    }
    stack.push(name);
    openByName.set(name, (openByName.get(name) ?? 0) + 1);
    if (stack.length > deepest) deepest = stack.length;
  }
  return deepest;
}
