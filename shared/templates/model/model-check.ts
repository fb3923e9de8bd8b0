import { type Ast, isPath } from './syntax.ts';

/**
 * Which variables a render would look up and the model lacks, found by walking the parsed template
 * over the model the way Handlebars renders it: `#if`/`#unless` take the branch the model selects,
 * `#each` visits every item (so `items[2].title` is named when the third item lacks it), `#with` and
 * `#each` change the context, `../` climbs it, block parameters and `@root` are followed. Only own
 * properties count, as only they render (prototype access is off).
 *
 * A variable is missing when a part of its path is not an own property of the value before it (a
 * `null` value is present: the model says "empty" on purpose). The condition of `#if` and `#unless`
 * may be absent (absent is false), and so may the value of an `#each` or `#with` that has an
 * `{{else}}` branch: the template says what to show without it.
 *
 * A statement identical (for the walk: same lookups, same blocks, see `signatureOf`) to one already
 * walked in the same context looks up the same variables and finds what that one found, so it is
 * skipped: its reports would only repeat the first one's, and each variable is named once, at its
 * first line. The walk's cost follows the distinct statements of each context, not the template's
 * length (a newsletter that repeats a section of variables walks the section once).
 */
export interface MissingVariable {
  /** The path in the model: `user.name`, `items[2].title`. */
  variable: string;
  line: number;
}

interface Frame {
  context: unknown;
  /** The model path of `context` ('' at the root). */
  path: string;
  blockParams: Map<string, { value: unknown; path: string }>;
  loop?: { index: number; key: string | number; first: boolean; last: boolean };
}

interface Resolved {
  found: boolean;
  value: unknown;
  path: string;
}

/** The innermost frame that matches. */
function innermost(stack: readonly Frame[], test: (frame: Frame) => boolean): Frame | undefined {
  for (let index = stack.length - 1; index >= 0; index--) {
    const frame = stack[index] as Frame;
    if (test(frame)) return frame;
  }
  return undefined;
}

const identifier = /^[A-Za-z_$][\w$]*$/;

/** `user` + `name` → `user.name`; `items` + 2 → `items[2]`; odd keys in brackets. */
export function joinPath(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`;
  if (identifier.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

/** As Handlebars decides: `this.x`, `./x` and `../x` never name a block parameter. */
const isScoped = (path: hbs.AST.PathExpression): boolean =>
  path.depth > 0 || /^\.|this\b/.test(path.original);

/** What decides a path's lookup (`original` does not: `{{[a.b]}}` and `{{a.b}}` differ in parts). */
const lookupOf = (path: hbs.AST.PathExpression) => [path.data, path.depth, isScoped(path), path.parts];

/**
 * Signatures of parsed statements, kept as long as the parsed (and cached) template is. A
 * signature is a small number: equal statements get the same number, and a block's is made of its
 * children's numbers, so a signature's text never contains another's and the work stays linear in
 * the template however deep it nests.
 */
const signatures = new WeakMap<hbs.AST.Node, number>();
/** The numbers given out, by the text they stand for (shared by every template of the instance). */
const interned = new Map<string, number>();
const maxInterned = 200_000;
/** Never reused, also after the map is cleared, so a forgotten number cannot match a new one. */
let lastId = 0;

function intern(key: string): number {
  let id = interned.get(key);
  if (id === undefined) {
    // A long-lived instance forgets old numbers rather than grow: a statement still holds its own.
    if (interned.size >= maxInterned) interned.clear();
    lastId++;
    id = lastId;
    interned.set(key, id);
  }
  return id;
}

/**
 * What the walk reads of a statement, as a number: its lookups and block structure, without its
 * text, comments or lines; undefined for a statement the walk does nothing with. Two statements with
 * the same signature, met in the same context, resolve the same paths to the same values.
 */
function signatureOf(node: hbs.AST.Statement): number | undefined {
  let signature = signatures.get(node);
  if (signature !== undefined) return signature;
  if (node.type === 'MustacheStatement') {
    const path = (node as hbs.AST.MustacheStatement).path;
    if (!isPath(path)) return undefined;
    signature = intern(JSON.stringify(['m', lookupOf(path)]));
  } else if (node.type === 'BlockStatement') {
    const block = node as hbs.AST.BlockStatement;
    signature = intern(
      JSON.stringify([
        'b',
        block.path.original,
        block.params.map((param) => (isPath(param) ? lookupOf(param) : param.type)),
        block.program.blockParams ?? [],
        programSignature(block.program),
        programSignature(block.inverse),
      ]),
    );
  } else {
    return undefined;
  }
  signatures.set(node, signature);
  return signature;
}

function programSignature(program: Ast | undefined | null): number[] | null {
  if (program === undefined || program === null) return null;
  const body: number[] = [];
  for (const statement of program.body) {
    const signature = signatureOf(statement);
    if (signature !== undefined) body.push(signature);
  }
  return body;
}

/** An own property, as Handlebars' prototype-safe lookup reads it. */
function ownProperty(value: unknown, key: string): { found: boolean; value: unknown } {
  if (value === null || value === undefined) return { found: false, value: undefined };
  const target = Object(value) as Record<string, unknown>;
  return Object.hasOwn(target, key)
    ? { found: true, value: target[key] }
    : { found: false, value: undefined };
}

/** Handlebars' `#if` truthiness: false, null, '', 0, an empty list and absence are false. */
export const isTruthy = (value: unknown): boolean =>
  !(!value || (Array.isArray(value) && value.length === 0));

/** Handlebars' `isEmpty` (used by `#with`): like falsy, except that 0 is a value. */
const isEmpty = (value: unknown): boolean =>
  (!value && value !== 0) || (Array.isArray(value) && value.length === 0);

export class ModelChecker {
  readonly missing: MissingVariable[] = [];
  private readonly seen = new Set<string>();

  private readonly model: unknown;
  private readonly limit: number;

  constructor(model: unknown, limit = 50) {
    this.model = model;
    this.limit = limit;
  }

  check(ast: Ast): void {
    this.program(ast, [{ context: this.model, path: '', blockParams: new Map() }]);
  }

  private report(variable: string, line: number): void {
    if (this.seen.has(variable) || this.missing.length >= this.limit) return;
    this.seen.add(variable);
    this.missing.push({ variable, line });
  }

  private resolve(path: hbs.AST.PathExpression, stack: Frame[], required: boolean): Resolved {
    const line = path.loc.start.line;
    let value: unknown;
    let at: string;
    let rest = path.parts;
    if (path.data) {
      const name = path.parts[0];
      if (name === 'root') {
        value = this.model;
        at = '';
        rest = path.parts.slice(1);
      } else {
        // @index, @key, @first, @last (inside #each, checked when parsed) and a layout's @content.
        const loop = innermost(stack, (frame) => frame.loop !== undefined)?.loop;
        return { found: true, value: loop?.[name as keyof typeof loop], path: `@${name}` };
      }
    } else {
      const param = isScoped(path)
        ? undefined
        : innermost(stack, (frame) => frame.blockParams.has(path.parts[0] ?? ''));
      if (param !== undefined) {
        const bound = param.blockParams.get(path.parts[0] ?? '') as { value: unknown; path: string };
        value = bound.value;
        at = bound.path;
        rest = path.parts.slice(1);
      } else {
        const frame = stack[stack.length - 1 - path.depth];
        if (frame === undefined) {
          if (required) this.report(path.original, line);
          return { found: false, value: undefined, path: path.original };
        }
        value = frame.context;
        at = frame.path;
      }
    }
    for (const key of rest) {
      const next = ownProperty(value, key);
      at = joinPath(at, key);
      if (!next.found) {
        if (required) this.report(at, line);
        return { found: false, value: undefined, path: at };
      }
      value = next.value;
    }
    return { found: true, value, path: at };
  }

  private program(program: Ast | undefined, stack: Frame[]): void {
    if (program === undefined || program === null) return;
    const walked = new Set<number>();
    for (const statement of program.body) {
      const signature = signatureOf(statement);
      if (signature === undefined || walked.has(signature)) continue;
      walked.add(signature);
      if (statement.type === 'MustacheStatement') {
        const mustache = statement as hbs.AST.MustacheStatement;
        if (isPath(mustache.path)) this.resolve(mustache.path, stack, true);
      } else if (statement.type === 'BlockStatement') {
        this.block(statement as hbs.AST.BlockStatement, stack);
      }
    }
  }

  private block(block: hbs.AST.BlockStatement, stack: Frame[]): void {
    const name = block.path.original;
    const param = block.params[0];
    if (!isPath(param)) return;
    const hasElse = block.inverse !== undefined && block.inverse !== null;
    if (name === 'if' || name === 'unless') {
      const { value } = this.resolve(param, stack, false);
      const truthy = isTruthy(value);
      this.program((name === 'if') === truthy ? block.program : block.inverse, stack);
      return;
    }
    const target = this.resolve(param, stack, !hasElse);
    const names = block.program.blockParams ?? [];
    if (name === 'with') {
      if (isEmpty(target.value)) {
        this.program(block.inverse, stack);
        return;
      }
      const blockParams = new Map<string, { value: unknown; path: string }>();
      if (names[0] !== undefined) blockParams.set(names[0], { value: target.value, path: target.path });
      stack.push({ context: target.value, path: target.path, blockParams });
      this.program(block.program, stack);
      stack.pop();
      return;
    }
    // #each: a list item by item, an object key by key (own keys, in order).
    const value = target.value;
    const entries: Array<[string | number, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [index, item])
      : value !== null && typeof value === 'object'
        ? Object.entries(value)
        : [];
    if (entries.length === 0) {
      this.program(block.inverse, stack);
      return;
    }
    entries.forEach(([key, item], index) => {
      const path = joinPath(target.path, key);
      const blockParams = new Map<string, { value: unknown; path: string }>();
      if (names[0] !== undefined) blockParams.set(names[0], { value: item, path });
      if (names[1] !== undefined) blockParams.set(names[1], { value: key, path: `@${names[1]}` });
      stack.push({
        context: item,
        path,
        blockParams,
        loop: { index, key, first: index === 0, last: index === entries.length - 1 },
      });
      this.program(block.program, stack);
      stack.pop();
    });
  }
}

/** The variables a render of `ast` over `model` would miss (at most `limit`, each named once). */
export function missingVariables(ast: Ast, model: unknown, limit = 50): MissingVariable[] {
  const checker = new ModelChecker(model, limit);
  checker.check(ast);
  return checker.missing;
}
