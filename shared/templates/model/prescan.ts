import type { TemplateProblem } from './syntax.ts';

/**
 * A single pass over a part's text before Handlebars parses it (docs/security.md, "Limits"): it
 * counts the tags, follows which blocks are open and how deep, and stops at the first limit or
 * mismatch. Handlebars' parser and the checks after it take time and stack that grow with the
 * input; this pass takes neither, so a part that would be refused is refused before they run, and
 * the mismatches it finds are said in words (`{{#if}}` opened on line 1 is never closed) rather
 * than in the parser's token names.
 */

/** Blocks open inside each other at most this deep. */
export const maxBlockDepth = 16;
/** `#each` open inside `#each` at most this deep (the work multiplies with each level). */
export const maxEachDepth = 3;
/** Tags (`{{…}}`, comments included) in one part. */
export const maxStatementsPerPart = 10_000;

interface OpenBlock {
  name: string;
  line: number;
}

/** The helper name of a block tag's body (`#each items as |x|` → `each`; `#> layout` → `>`). */
function blockName(body: string): string {
  const match = /^[\s~]*([>*]?)\s*([^\s}~()]*)/.exec(body);
  return match === null ? '' : `${match[1] ?? ''}${match[2] ?? ''}`;
}

/** Where a `{{!-- … --}}` comment ends (`--~}}` too). */
const commentEnd = /--~?\}\}/g;

const opening = (name: string) => `\`{{#${name}}}\``;

/** The first problem of `source` found without parsing it, or undefined. */
export function prescanPart(part: string, source: string): TemplateProblem | undefined {
  const open: OpenBlock[] = [];
  let eachDepth = 0;
  let statements = 0;
  let line = 1;
  let position = 0;
  /** Moves to `next`, counting the line breaks on the way (each character is passed once). */
  const advance = (next: number) => {
    for (let index = position; index < next; index++) if (source.charCodeAt(index) === 10) line++;
    position = next;
  };
  for (;;) {
    const start = source.indexOf('{{', position);
    if (start === -1) break;
    advance(start);
    // `\{{` is text, as Handlebars reads it (`\\{{` is a backslash and then a tag).
    if (start > 0 && source[start - 1] === '\\' && source[start - 2] !== '\\') {
      advance(start + 2);
      continue;
    }
    const tagLine = line;
    if (source.startsWith('{{{{', start)) {
      return { part, line: tagLine, message: 'Raw blocks ({{{{raw}}}}) are not available' };
    }
    let bodyStart = start + 2;
    let closer = '}}';
    if (source[bodyStart] === '{') {
      bodyStart++;
      closer = '}}}';
    }
    if (source[bodyStart] === '~') bodyStart++;
    let end: number;
    if (source.startsWith('!--', bodyStart)) {
      commentEnd.lastIndex = bodyStart + 3;
      const found = commentEnd.exec(source);
      end = found === null ? -1 : found.index;
      closer = found === null ? '--}}' : found[0];
    } else {
      end = source.indexOf(closer, bodyStart);
    }
    if (end === -1) {
      return {
        part,
        line: tagLine,
        message:
          closer === '--}}'
            ? 'The comment `{{!--` opened here is never closed with `--}}`'
            : `The tag \`${source.slice(start, Math.min(start + 20, source.length)).split('\n')[0]}\` opened here is never closed with \`${closer}\``,
      };
    }
    statements++;
    if (statements > maxStatementsPerPart) {
      return {
        part,
        line: tagLine,
        message: `More than ${maxStatementsPerPart.toLocaleString('en-US')} tags in one part; split the template or move repeated content into a list with {{#each}}`,
        limit: true,
      };
    }
    const body = source.slice(bodyStart, end);
    advance(end + closer.length);
    const kind = body[0];
    if (kind === '#' || (kind === '^' && body.trim() !== '^')) {
      const name = blockName(body.slice(1));
      open.push({ name, line: tagLine });
      if (name === 'each') eachDepth++;
      if (open.length > maxBlockDepth) {
        return {
          part,
          line: tagLine,
          message: `${opening(name)} on line ${tagLine} is the ${open.length}th block open at once; blocks nest at most ${maxBlockDepth} deep`,
          limit: true,
        };
      }
      if (name === 'each' && eachDepth > maxEachDepth) {
        return {
          part,
          line: tagLine,
          message: `${opening('each')} on line ${tagLine} is the ${eachDepth}th {{#each}} inside {{#each}}; at most ${maxEachDepth} loops nest`,
          limit: true,
        };
      }
    } else if (kind === '/') {
      const name = blockName(body.slice(1));
      const top = open.pop();
      if (top === undefined) {
        return {
          part,
          line: tagLine,
          message: `\`{{/${name}}}\` on line ${tagLine} closes no block: nothing is open here`,
        };
      }
      if (top.name !== name) {
        return {
          part,
          line: tagLine,
          message: `\`{{/${name}}}\` on line ${tagLine} does not close ${opening(top.name)} opened on line ${top.line}; close that first with \`{{/${top.name}}}\``,
        };
      }
      if (name === 'each') eachDepth--;
    }
  }
  const unclosed = open[open.length - 1];
  if (unclosed !== undefined) {
    return {
      part,
      line: unclosed.line,
      message: `${opening(unclosed.name)} opened on line ${unclosed.line} is never closed; add \`{{/${unclosed.name}}}\``,
    };
  }
  return undefined;
}
