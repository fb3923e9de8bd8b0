import Handlebars from 'handlebars';
import { prescanPart } from './prescan.ts';

/**
 * The template language (docs/templates.md): Handlebars, parsed by the `handlebars` package, limited
 * to what cannot run code: output of variables (`{{x}}`, `{{{x}}}`), comments, and the four block
 * helpers `#if`, `#unless`, `#each` and `#with` (with `{{else}}`, `{{else if …}}` and block
 * parameters on `#each` and `#with`). Partials, decorators, sub-expressions, helper calls with
 * arguments, literals and inverse sections are refused with the line they are on.
 */

export type Ast = hbs.AST.Program;
type Node = hbs.AST.Node;
type Statement = hbs.AST.Statement;
type Mustache = hbs.AST.MustacheStatement;
type Block = hbs.AST.BlockStatement;
type Path = hbs.AST.PathExpression;

/** One thing wrong with a template, where it is. `part` is `subject`, `html`, `text` or `layout.html` … */
export interface TemplateProblem {
  part: string;
  line: number;
  message: string;
  /** A limit of docs/security.md ("Limits") rather than a mistake: a preview answers it 107. */
  limit?: true;
}

export const blockHelpers = ['if', 'unless', 'each', 'with'] as const;
export type BlockHelper = (typeof blockHelpers)[number];

/** Data variables a template may read: `@root.x`, the loop's `@index` … and a layout's `@content`. */
const loopData = new Set(['index', 'key', 'first', 'last']);
const dataNames = new Set([...loopData, 'root', 'content']);

/**
 * Programs nest at most this deep in the parsed tree. Blocks are held to `maxBlockDepth` before
 * parsing (prescan.ts); each `{{else if}}` nests one program more, so a long chain is bounded here.
 */
export const maxNesting = 64;

/** One isolated Handlebars environment: no helper beyond the four block helpers. */
export const handlebars = Handlebars.create();
handlebars.unregisterHelper('log');
handlebars.unregisterHelper('lookup');

const isBlockHelper = (name: string): name is BlockHelper =>
  (blockHelpers as readonly string[]).includes(name);

export const isPath = (node: Node | undefined): node is Path => node?.type === 'PathExpression';

/** The parser's token names, in the words of the template (what a reader can find in the text). */
const tokenWords: Record<string, string> = {
  EOF: 'the end of the part',
  CLOSE: '`}}`',
  CLOSE_UNESCAPED: '`}}}`',
  CLOSE_RAW_BLOCK: '`}}}}`',
  INVERSE: '`{{else}}`',
  OPEN_INVERSE_CHAIN: '`{{else …}}`',
  OPEN_ENDBLOCK: 'a closing tag `{{/…}}`',
  OPEN_BLOCK: 'a block `{{#…}}`',
  OPEN: '`{{`',
  OPEN_UNESCAPED: '`{{{`',
  OPEN_SEXPR: '`(`',
  CLOSE_SEXPR: '`)`',
  EQUALS: '`=`',
  ID: 'a variable name',
  SEP: '`.` or `/`',
  INVALID: 'a character that cannot stand in a tag',
  CONTENT: 'text',
};
const wordsFor = (token: string) => tokenWords[token] ?? `\`${token.toLowerCase()}\``;

/** What the parser expected and found, said as the template's text (`got 'CLOSE'` → "found `}}`"). */
function parseMessage(text: string): string | undefined {
  const match = /Expecting (.*), got '([A-Z_]+)'/.exec(text);
  if (match === null) return undefined;
  const expected = new Set([...(match[1] ?? '').matchAll(/'([A-Z_]+)'/g)].map((entry) => entry[1]));
  const got = match[2] ?? '';
  const caret = /\n(-*)\^/.exec(text);
  const column = caret === null ? '' : ` at column ${(caret[1]?.length ?? 0) + 1}`;
  if (got === 'INVERSE' || got === 'OPEN_INVERSE_CHAIN') {
    return `\`{{else}}\`${column} stands outside a block, or is the second \`{{else}}\` of the same block`;
  }
  if (got === 'OPEN_ENDBLOCK') return `A closing tag \`{{/…}}\`${column} closes no open block`;
  if (expected.has('CLOSE_UNESCAPED') && got === 'CLOSE') {
    return `A tag opened with \`{{{\` must end with \`}}}\`; found \`}}\`${column}`;
  }
  if (got === 'CLOSE_UNESCAPED') {
    return `\`}}}\`${column} ends a tag opened with \`{{\`: write \`{{x}}\` or \`{{{x}}}\``;
  }
  if (expected.has('ID') && (got === 'CLOSE' || got === 'CLOSE_UNESCAPED')) {
    return `A tag${column} has no variable name: write one between the braces, e.g. \`{{name}}\``;
  }
  const wanted = expected.has('ID')
    ? 'a variable name'
    : [...expected]
        .filter((token) => token !== undefined)
        .slice(0, 3)
        .map((token) => wordsFor(token as string))
        .join(' or ');
  return `Found ${wordsFor(got)}${column} where ${wanted} should be`;
}

/** A Handlebars parse error as a problem: its line, and what went wrong in the template's words. */
function problemFromError(part: string, error: unknown): TemplateProblem {
  const text = error instanceof Error ? error.message : String(error);
  const located = error as { lineNumber?: unknown };
  const fromMessage = /on line (\d+)/.exec(text) ?? / - (\d+):\d+$/.exec(text);
  const line =
    typeof located.lineNumber === 'number'
      ? located.lineNumber
      : fromMessage !== null
        ? Number(fromMessage[1])
        : 1;
  const worded = parseMessage(text);
  if (worded !== undefined) return { part, line, message: worded.slice(0, 300) };
  // Other messages of the parser are already words ("if doesn't match each"); drop the source echo.
  const lines = text.split('\n').filter((entry) => entry.trim() !== '');
  const summary = lines.length > 2 ? `${lines[0]} ${lines[lines.length - 1]}` : lines.join(' ');
  const message = summary
    .replace(/ - \d+:\d+$/, '')
    .replace(/^(Parse|Lexical) error on line \d+:/, '$1 error:');
  return { part, line, message: message.slice(0, 300) };
}

/** Refuses every construct outside the language, with its line; `inLoop` tracks where `@index` means something. */
function validate(part: string, program: Ast, problems: TemplateProblem[], inLoop: boolean, depth: number) {
  if (depth > maxNesting) {
    problems.push({
      part,
      line: program.loc?.start.line ?? 1,
      message: `Blocks and {{else if}} branches nest more than ${maxNesting} deep; split a long {{else if}} chain`,
      limit: true,
    });
    return;
  }
  for (const statement of program.body) validateStatement(part, statement, problems, inLoop, depth);
}

function validatePath(part: string, path: Path, problems: TemplateProblem[], inLoop: boolean): void {
  const line = path.loc.start.line;
  if (!path.data) return;
  const name = path.parts[0] ?? '';
  if (!dataNames.has(name)) {
    problems.push({
      part,
      line,
      message: `@${name} is not a variable (use @root, @index, @key, @first, @last or @content)`,
    });
  } else if (loopData.has(name) && !inLoop) {
    problems.push({ part, line, message: `@${name} is only set inside {{#each}}` });
  } else if (name !== 'root' && path.parts.length > 1) {
    problems.push({ part, line, message: `@${name} has no fields` });
  }
}

function validateStatement(
  part: string,
  statement: Statement,
  problems: TemplateProblem[],
  inLoop: boolean,
  depth: number,
): void {
  const line = statement.loc?.start.line ?? 1;
  switch (statement.type) {
    case 'ContentStatement':
    case 'CommentStatement':
      return;
    case 'MustacheStatement': {
      const mustache = statement as Mustache;
      if (!isPath(mustache.path)) {
        problems.push({ part, line, message: 'Only variables can be output (no literals)' });
        return;
      }
      const name = mustache.path.original;
      if ((mustache.params?.length ?? 0) > 0 || (mustache.hash?.pairs?.length ?? 0) > 0) {
        problems.push({ part, line, message: `{{${name} …}}: helpers are not available; output a variable` });
        return;
      }
      if (isBlockHelper(name)) {
        problems.push({
          part,
          line,
          message: `{{${name}}} is a block helper: write {{#${name} …}}…{{/${name}}}`,
        });
        return;
      }
      validatePath(part, mustache.path, problems, inLoop);
      return;
    }
    case 'BlockStatement': {
      const block = statement as Block;
      const name = block.path.original;
      if (block.program === undefined || block.program === null) {
        problems.push({ part, line, message: `{{^${name}}} sections are not available; use {{#unless}}` });
        return;
      }
      if (!isBlockHelper(name)) {
        problems.push({
          part,
          line,
          message: `{{#${name}}}: only #if, #unless, #each and #with are available`,
        });
        return;
      }
      const param = block.params[0];
      if (block.params.length !== 1 || !isPath(param)) {
        problems.push({ part, line, message: `{{#${name}}} takes exactly one variable` });
        return;
      }
      if ((block.hash?.pairs?.length ?? 0) > 0) {
        problems.push({ part, line, message: `{{#${name}}} takes no options` });
        return;
      }
      const blockParams = block.program.blockParams ?? [];
      const allowed = name === 'each' ? 2 : name === 'with' ? 1 : 0;
      if (blockParams.length > allowed) {
        problems.push({
          part,
          line,
          message:
            allowed === 0
              ? `{{#${name}}} takes no block parameters`
              : `{{#${name}}} takes at most ${allowed} block parameter${allowed === 1 ? '' : 's'}`,
        });
        return;
      }
      validatePath(part, param, problems, inLoop);
      validate(part, block.program, problems, inLoop || name === 'each', depth + 1);
      if (block.inverse) validate(part, block.inverse, problems, inLoop, depth + 1);
      return;
    }
    case 'PartialStatement':
    case 'PartialBlockStatement':
      problems.push({ part, line, message: 'Partials ({{> name}}) are not available; use a layout' });
      return;
    case 'Decorator':
    case 'DecoratorBlock':
      problems.push({ part, line, message: 'Decorators ({{* name}}) are not available' });
      return;
    default:
      problems.push({ part, line, message: `${statement.type} is not available` });
  }
}

export type ParsedPart = { ok: true; ast: Ast } | { ok: false; problems: TemplateProblem[] };

/** Parses one part (`part` names it in problems) and checks that it uses only the allowed language. */
export function parsePart(part: string, source: string): ParsedPart {
  const scanned = prescanPart(part, source);
  if (scanned !== undefined) return { ok: false, problems: [scanned] };
  let ast: Ast;
  try {
    ast = handlebars.parse(source);
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, problems: [exhausted(part)] };
    return { ok: false, problems: [problemFromError(part, error)] };
  }
  const problems: TemplateProblem[] = [];
  try {
    validate(part, ast, problems, false, 0);
  } catch (error) {
    if (error instanceof RangeError) return { ok: false, problems: [exhausted(part)] };
    throw error;
  }
  return problems.length === 0 ? { ok: true, ast } : { ok: false, problems };
}

/** The parser ran out of stack or memory: the part is refused as too complex, never a 500. */
const exhausted = (part: string): TemplateProblem => ({
  part,
  line: 1,
  message: 'The part is too complex to parse (too deep or too long); simplify it',
  limit: true,
});

/** Runtime options of every render: no prototype property or method is ever reachable. */
const runtimeOptions = {
  allowProtoPropertiesByDefault: false,
  allowProtoMethodsByDefault: false,
  allowCallsToHelperMissing: false,
} as const;

/**
 * Compiles a part that `parsePart` accepted. HTML parts escape `{{x}}` (Handlebars escapes
 * `& < > " ' \` =`); the subject and the text part do not, since HTML entities would corrupt them.
 * Only the four block helpers are known (`knownHelpersOnly`), so nothing else can be called.
 * Handlebars compiles on the first call; the caller keeps the function (shared/templates/model/cache.ts).
 */
export function compilePart(
  source: string,
  escapeHtml: boolean,
): (model: unknown, content?: string) => string {
  const template = handlebars.compile(source, {
    noEscape: !escapeHtml,
    strict: false,
    knownHelpersOnly: true,
    knownHelpers: {
      if: true,
      unless: true,
      each: true,
      with: true,
      log: false,
      lookup: false,
      helperMissing: false,
      blockHelperMissing: false,
    },
  });
  return (model, content) =>
    template(model, content === undefined ? runtimeOptions : { ...runtimeOptions, data: { content } });
}
