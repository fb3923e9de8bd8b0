import { type Ast, isPath } from './syntax.ts';

/**
 * The model a template asks for, read from its syntax alone (what `render` answers as
 * `suggested_model`, the way Postmark suggests one): every variable it outputs becomes a placeholder
 * `"<name>_Value"`, every `#if`/`#unless` condition `true`, every `#each` a list of one item built
 * from its body, every `#with` an object built from its body. `../` climbs out of a block, `@root`
 * starts from the top, block parameters name the item or object they stand for.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A place in the model being built: read it, or put a value there. */
interface Slot {
  get(): Json | undefined;
  set(value: Json): void;
  name: string;
}

interface Frame {
  slot: Slot;
  blockParams: Map<string, Slot>;
}

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A slot for `key` of the object in `slot` (made an object if it is not one yet). */
function child(slot: Slot, key: string): Slot {
  let value = slot.get();
  if (!isObject(value)) {
    value = {};
    slot.set(value);
  }
  const object = value;
  return {
    name: key,
    get: () => (Object.hasOwn(object, key) ? object[key] : undefined),
    set: (next) => {
      Object.defineProperty(object, key, {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    },
  };
}

/** A variable that is output: a placeholder, unless the template also uses it as an object or list. */
function markValue(slot: Slot): void {
  const value = slot.get();
  if (
    value === undefined ||
    typeof value === 'boolean' ||
    (isObject(value) && Object.keys(value).length === 0)
  ) {
    slot.set(`${slot.name}_Value`);
  }
}

function markFlag(slot: Slot): void {
  if (slot.get() === undefined) slot.set(true);
}

/** The first item of a list at `slot` (made a list of one empty object if it is not a list yet). */
function listItem(slot: Slot): Slot {
  let value = slot.get();
  if (!Array.isArray(value)) {
    value = [{}];
    slot.set(value);
  }
  const list = value;
  if (list.length === 0) list.push({});
  return {
    name: slot.name,
    get: () => list[0],
    set: (next) => {
      list[0] = next;
    },
  };
}

function objectAt(slot: Slot): Slot {
  if (!isObject(slot.get())) slot.set({});
  return slot;
}

export class ModelSuggester {
  private readonly root: { value: Json } = { value: {} };
  private readonly rootSlot: Slot = {
    name: 'model',
    get: () => this.root.value,
    set: (value) => {
      this.root.value = value;
    },
  };

  add(ast: Ast): void {
    this.program(ast, [{ slot: this.rootSlot, blockParams: new Map() }]);
  }

  /** The suggested model (an object). */
  get model(): { [key: string]: Json } {
    return isObject(this.root.value) ? this.root.value : {};
  }

  private slotFor(path: hbs.AST.PathExpression, stack: Frame[]): Slot | undefined {
    let slot: Slot | undefined;
    let parts = path.parts;
    if (path.data) {
      if (path.parts[0] !== 'root') return undefined;
      slot = this.rootSlot;
      parts = path.parts.slice(1);
    } else {
      const scoped = /^\.|this\b/.test(path.original) || path.depth > 0;
      let bound: Slot | undefined;
      if (!scoped) {
        for (let index = stack.length - 1; index >= 0 && bound === undefined; index--) {
          bound = stack[index]?.blockParams.get(path.parts[0] ?? '');
        }
      }
      if (bound !== undefined) {
        slot = bound;
        parts = path.parts.slice(1);
      } else {
        slot = stack[stack.length - 1 - path.depth]?.slot;
      }
    }
    if (slot === undefined) return undefined;
    for (const key of parts) slot = child(slot, key);
    return slot;
  }

  private program(program: Ast | undefined | null, stack: Frame[]): void {
    if (program === undefined || program === null) return;
    for (const statement of program.body) {
      if (statement.type === 'MustacheStatement') {
        const mustache = statement as hbs.AST.MustacheStatement;
        if (!isPath(mustache.path)) continue;
        const slot = this.slotFor(mustache.path, stack);
        if (slot !== undefined) markValue(slot);
      } else if (statement.type === 'BlockStatement') {
        this.block(statement as hbs.AST.BlockStatement, stack);
      }
    }
  }

  private block(block: hbs.AST.BlockStatement, stack: Frame[]): void {
    const param = block.params[0];
    if (!isPath(param)) return;
    const slot = this.slotFor(param, stack);
    const name = block.path.original;
    const names = block.program?.blockParams ?? [];
    if (slot === undefined || name === 'if' || name === 'unless') {
      if (slot !== undefined) markFlag(slot);
      this.program(block.program, stack);
      this.program(block.inverse, stack);
      return;
    }
    const inner = name === 'each' ? listItem(slot) : objectAt(slot);
    const blockParams = new Map<string, Slot>();
    if (names[0] !== undefined) blockParams.set(names[0], inner);
    stack.push({ slot: inner, blockParams });
    this.program(block.program, stack);
    stack.pop();
    this.program(block.inverse, stack);
  }
}

/** The suggested model of several parsed parts (a template and its layout share one model). */
export function suggestedModel(asts: readonly Ast[]): { [key: string]: Json } {
  const suggester = new ModelSuggester();
  for (const ast of asts) suggester.add(ast);
  return suggester.model;
}
