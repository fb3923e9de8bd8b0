import type { Ast } from './syntax.ts';
import { isPath } from './syntax.ts';

/**
 * The cost of a render, counted before Handlebars runs (docs/security.md, "Limits"): a walk of the
 * parsed part over the model the way Handlebars renders it (the branch `#if` selects, every item of
 * `#each`, the context of `#with`), counting the statements it would run and the UTF-8 bytes it
 * would write, without building the output. It stops as soon as either passes its budget, so its
 * own cost is bounded by the budget, and a render is only started when it fits.
 */

/** Statements (and loop items) one part may run in one render. */
export const maxRenderSteps = 100_000;
/** UTF-8 bytes a rendered message may have: subject, HTML and text together (the request limit). */
export const maxRenderedBytes = 6_000_000;

/** A render that would pass its budget: `part` names the part (`html`, `layout.text` …). */
export class RenderBudgetError extends Error {
  readonly part: string;
  constructor(part: string, message: string) {
    super(message);
    this.name = 'RenderBudgetError';
    this.part = part;
  }
}

interface Frame {
  context: unknown;
  blockParams: Map<string, unknown> | undefined;
  loop?: { index: number; key: string | number; first: boolean; last: boolean };
}

/** Handlebars' escapes in the HTML part and how many bytes each adds to its character. */
const escapeGrowth: Record<string, number> = { '&': 4, '<': 3, '>': 3, '"': 5, "'": 5, '`': 5, '=': 5 };
const escapable = /[&<>"'`=]/g;

/** UTF-8 bytes of a value as Handlebars writes it (`'' + value`; null and undefined write nothing). */
function valueBytes(value: unknown, escaped: boolean): number {
  if (value === null || value === undefined) return 0;
  const text = typeof value === 'string' ? value : String(value);
  let bytes = Buffer.byteLength(text);
  if (escaped) for (const match of text.matchAll(escapable)) bytes += escapeGrowth[match[0]] ?? 0;
  return bytes;
}

/** UTF-8 bytes of text statements, measured once per parsed node. */
const contentBytes = new WeakMap<hbs.AST.Node, number>();

const isTruthy = (value: unknown) => !(!value || (Array.isArray(value) && value.length === 0));
const isEmpty = (value: unknown) => (!value && value !== 0) || (Array.isArray(value) && value.length === 0);

function ownProperty(value: unknown, key: string): unknown {
  if (value === null || value === undefined) return undefined;
  const target = Object(value) as Record<string, unknown>;
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

const isScoped = (path: hbs.AST.PathExpression): boolean =>
  path.depth > 0 || /^\.|this\b/.test(path.original);

export interface RenderCost {
  steps: number;
  bytes: number;
}

/** What a render may cost, and how a refusal names it. */
export interface RenderBudgetOptions {
  part: string;
  escape: boolean;
  content?: string;
  maxBytes: number;
  maxSteps?: number;
  /** Why the byte budget is what it is, for the message ("a message's parts together …"). */
  bytesReason?: string;
  /** The whole budget that `maxBytes` is what is left of, as the message names it. */
  limit?: number;
}

class RenderMeter {
  steps = 0;
  bytes = 0;
  private readonly model: unknown;
  private readonly options: Required<Omit<RenderBudgetOptions, 'content'>> & { content?: string };

  constructor(model: unknown, options: RenderBudgetOptions) {
    this.model = model;
    this.options = {
      ...options,
      maxSteps: options.maxSteps ?? maxRenderSteps,
      bytesReason: options.bytesReason ?? 'the subject, HTML and text of a message together',
      limit: options.limit ?? options.maxBytes,
    };
  }

  private step(): void {
    this.steps++;
    if (this.steps > this.options.maxSteps) {
      throw new RenderBudgetError(
        this.options.part,
        `The ${this.options.part} part would run more than ${this.options.maxSteps.toLocaleString('en-US')} statements and loop items over this model; render fewer items or nest fewer loops`,
      );
    }
  }

  private write(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.options.maxBytes) {
      throw new RenderBudgetError(
        this.options.part,
        `The ${this.options.part} part would take the rendering past ${this.options.limit.toLocaleString('en-US')} bytes over this model (${this.options.bytesReason})`,
      );
    }
  }

  private resolve(path: hbs.AST.PathExpression, stack: readonly Frame[]): unknown {
    let value: unknown;
    let rest = path.parts;
    if (path.data) {
      const name = path.parts[0];
      if (name === 'root') {
        value = this.model;
        rest = path.parts.slice(1);
      } else if (name === 'content') {
        return this.options.content;
      } else {
        for (let index = stack.length - 1; index >= 0; index--) {
          const loop = stack[index]?.loop;
          if (loop !== undefined) return loop[name as keyof typeof loop];
        }
        return undefined;
      }
    } else {
      const first = path.parts[0] ?? '';
      let bound: Frame | undefined;
      if (!isScoped(path)) {
        for (let index = stack.length - 1; index >= 0 && bound === undefined; index--) {
          const frame = stack[index] as Frame;
          if (frame.blockParams?.has(first)) bound = frame;
        }
      }
      if (bound !== undefined) {
        value = bound.blockParams?.get(first);
        rest = path.parts.slice(1);
      } else {
        value = stack[stack.length - 1 - path.depth]?.context;
      }
    }
    for (const key of rest) {
      value = ownProperty(value, key);
      if (value === undefined) return undefined;
    }
    return value;
  }

  program(program: Ast | undefined | null, stack: Frame[]): void {
    if (program === undefined || program === null) return;
    for (const statement of program.body) {
      this.step();
      if (statement.type === 'ContentStatement') {
        let bytes = contentBytes.get(statement);
        if (bytes === undefined) {
          bytes = Buffer.byteLength((statement as hbs.AST.ContentStatement).value);
          contentBytes.set(statement, bytes);
        }
        this.write(bytes);
      } else if (statement.type === 'MustacheStatement') {
        const mustache = statement as hbs.AST.MustacheStatement;
        if (!isPath(mustache.path)) continue;
        this.write(valueBytes(this.resolve(mustache.path, stack), this.options.escape && mustache.escaped));
      } else if (statement.type === 'BlockStatement') {
        this.block(statement as hbs.AST.BlockStatement, stack);
      }
    }
  }

  private block(block: hbs.AST.BlockStatement, stack: Frame[]): void {
    const param = block.params[0];
    if (!isPath(param)) return;
    const value = this.resolve(param, stack);
    const name = block.path.original;
    const names = block.program.blockParams ?? [];
    if (name === 'if' || name === 'unless') {
      this.program((name === 'if') === isTruthy(value) ? block.program : block.inverse, stack);
      return;
    }
    if (name === 'with') {
      if (isEmpty(value)) {
        this.program(block.inverse, stack);
        return;
      }
      const blockParams = names[0] === undefined ? undefined : new Map([[names[0], value]]);
      stack.push({ context: value, blockParams });
      this.program(block.program, stack);
      stack.pop();
      return;
    }
    // #each: a list item by item, an object key by key.
    const keys: Array<string | number> = Array.isArray(value)
      ? value.map((_, index) => index)
      : value !== null && typeof value === 'object'
        ? Object.keys(value)
        : [];
    if (keys.length === 0) {
      this.program(block.inverse, stack);
      return;
    }
    keys.forEach((key, index) => {
      this.step();
      const item = (value as Record<string | number, unknown>)[key];
      const blockParams =
        names.length === 0
          ? undefined
          : new Map<string, unknown>([
              [names[0] as string, item],
              [names[1] ?? '', key],
            ]);
      stack.push({
        context: item,
        blockParams,
        loop: { index, key, first: index === 0, last: index === keys.length - 1 },
      });
      this.program(block.program, stack);
      stack.pop();
    });
  }
}

/**
 * The statements and bytes a render of `ast` over `model` would take; throws RenderBudgetError
 * naming `part` as soon as either passes its budget (`maxBytes` is what is left of the message's).
 */
export function measureRender(ast: Ast, model: unknown, options: RenderBudgetOptions): RenderCost {
  const meter = new RenderMeter(model, options);
  try {
    meter.program(ast, [{ context: model, blockParams: undefined }]);
  } catch (error) {
    if (error instanceof RangeError) {
      throw new RenderBudgetError(
        options.part,
        `The ${options.part} part is too deep to render over this model`,
      );
    }
    throw error;
  }
  return { steps: meter.steps, bytes: meter.bytes };
}
