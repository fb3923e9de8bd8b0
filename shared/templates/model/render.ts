import { maxSubjectLength } from '../../platform/mail/headers.ts';
import { missingVariables } from './model-check.ts';
import { maxRenderedBytes, measureRender, RenderBudgetError } from './render-budget.ts';
import { type Ast, compilePart, parsePart, type TemplateProblem } from './syntax.ts';

/**
 * A template version compiled for rendering, and its rendering over a model with an optional
 * layout (docs/templates.md). Compiling is done once per version and kept (cache.ts); a render is
 * the three compiled functions plus a walk of the model for missing variables, each part measured
 * against its budget first (render-budget.ts).
 */

export const partNames = ['subject', 'html', 'text'] as const;
export type PartName = (typeof partNames)[number];

/** The parts of a version: a subject, and an HTML part, a text part or both. */
export interface TemplateParts {
  subject: string;
  html: string | null;
  text: string | null;
}

interface CompiledPart {
  ast: Ast;
  render: (model: unknown, content?: string) => string;
}

export interface CompiledTemplate {
  parts: TemplateParts;
  subject: CompiledPart;
  html: CompiledPart | undefined;
  text: CompiledPart | undefined;
  /** UTF-8 bytes of the parts (the cache's measure). */
  bytes: number;
  /** The layout a stored version names (null: none; undefined: inline parts). */
  layoutAlias?: string | null;
}

/** A missing variable with the part and line that use it. */
export interface MissingInPart {
  variable: string;
  part: string;
  line: number;
}

export interface Rendering {
  subject: string;
  html: string | null;
  text: string | null;
  missing: MissingInPart[];
  /** Problems of the rendered output itself (a subject that became two lines …). */
  problems: TemplateProblem[];
  /** UTF-8 bytes of the rendered subject, HTML and text (as measured before rendering). */
  bytes: number;
}

export function partsBytes(parts: TemplateParts): number {
  return (
    Buffer.byteLength(parts.subject) +
    (parts.html === null ? 0 : Buffer.byteLength(parts.html)) +
    (parts.text === null ? 0 : Buffer.byteLength(parts.text))
  );
}

/**
 * Parses and compiles every part that parses; `prefix` names the parts in problems (`layout.` for a
 * layout). HTML is escaped, the subject and the text are not (syntax.ts). A part with a problem is
 * left out (the editor's preview still renders the others).
 */
export function compileParts(
  parts: TemplateParts,
  prefix = '',
): { template: CompiledTemplate; problems: TemplateProblem[] } {
  const problems: TemplateProblem[] = [];
  const compiled: Partial<Record<PartName, CompiledPart>> = {};
  for (const name of partNames) {
    const source = parts[name];
    if (source === null) continue;
    const parsed = parsePart(`${prefix}${name}`, source);
    if (!parsed.ok) {
      problems.push(...parsed.problems);
      continue;
    }
    compiled[name] = { ast: parsed.ast, render: compilePart(source, name === 'html') };
  }
  return {
    template: {
      parts,
      subject: compiled.subject ?? emptySubject,
      html: compiled.html,
      text: compiled.text,
      bytes: partsBytes(parts),
    },
    problems,
  };
}

const emptySubject: CompiledPart = {
  ast: { type: 'Program', body: [], blockParams: [] } as unknown as Ast,
  render: () => '',
};

/** Every part compiled, or the problems that stop it. */
export function compileTemplate(
  parts: TemplateParts,
  prefix = '',
): { ok: true; template: CompiledTemplate } | { ok: false; problems: TemplateProblem[] } {
  const { template, problems } = compileParts(parts, prefix);
  return problems.length === 0 ? { ok: true, template } : { ok: false, problems };
}

/** Every parsed part of a template (and of its layout's HTML and text): what a model must satisfy. */
export function astsOf(template: CompiledTemplate, layout?: CompiledTemplate): Ast[] {
  const asts = [
    template.subject.ast,
    template.html?.ast,
    template.text?.ast,
    layout?.html?.ast,
    layout?.text?.ast,
  ];
  return asts.filter((ast): ast is Ast => ast !== undefined);
}

export interface RenderOptions {
  /** UTF-8 bytes the subject, HTML and text may render to together (`maxRenderedBytes`). */
  maxBytes?: number;
  /** Why that is the budget, for the refusal ("the messages of a batch together" …). */
  bytesReason?: string;
  /** Told each part's name as its work starts (the preview thread reports it to its pool). */
  onPart?: (part: string) => void;
}

/** Runs `work` for `part`; the call stack or memory running out is the part's budget, not a fault. */
function within<T>(part: string, work: () => T, onPart?: (part: string) => void): T {
  onPart?.(part);
  try {
    return work();
  } catch (error) {
    if (error instanceof RangeError) {
      throw new RenderBudgetError(
        part,
        `The ${part} part is too large or too deep to render over this model`,
      );
    }
    throw error;
  }
}

/**
 * Renders a template over `model`; a layout wraps the HTML and text bodies at `{{{@content}}}`.
 * Every part is measured first (render-budget.ts) and rendered only when it fits: a part over its
 * budget throws RenderBudgetError naming it, before Handlebars runs.
 */
export function renderTemplate(
  template: CompiledTemplate,
  model: unknown,
  layout?: CompiledTemplate,
  options: RenderOptions = {},
): Rendering {
  const maxBytes = options.maxBytes ?? maxRenderedBytes;
  const bytesReason = options.bytesReason;
  let used = 0;
  const measure = (part: CompiledPart | undefined, name: string, escapes: boolean, content?: string) => {
    if (part === undefined) return 0;
    options.onPart?.(name);
    const cost = measureRender(part.ast, model, {
      part: name,
      escape: escapes,
      maxBytes: maxBytes - used,
      limit: maxBytes,
      ...(content === undefined ? {} : { content }),
      ...(bytesReason === undefined ? {} : { bytesReason }),
    });
    return cost.bytes;
  };
  const subjectBytes = measure(template.subject, 'subject', false);
  used += subjectBytes;
  const htmlBytes = measure(template.html, 'html', true);
  used += htmlBytes;
  const textBytes = measure(template.text, 'text', false);
  used += textBytes;

  const missing: MissingInPart[] = [];
  const check = (part: CompiledPart | undefined, name: string) => {
    if (part === undefined) return;
    const found = within(name, () => missingVariables(part.ast, model), options.onPart);
    for (const entry of found) missing.push({ ...entry, part: name });
  };
  check(template.subject, 'subject');
  check(template.html, 'html');
  check(template.text, 'text');
  let html =
    template.html === undefined
      ? null
      : within('html', () => template.html?.render(model) ?? '', options.onPart);
  let text =
    template.text === undefined
      ? null
      : within('text', () => template.text?.render(model) ?? '', options.onPart);
  if (layout !== undefined) {
    if (html !== null && layout.html !== undefined) {
      const inner = html;
      check(layout.html, 'layout.html');
      used -= htmlBytes;
      used += measure(layout.html, 'layout.html', true, inner);
      html = within('layout.html', () => layout.html?.render(model, inner) ?? '', options.onPart);
    }
    if (text !== null && layout.text !== undefined) {
      const inner = text;
      check(layout.text, 'layout.text');
      used -= textBytes;
      used += measure(layout.text, 'layout.text', false, inner);
      text = within('layout.text', () => layout.text?.render(model, inner) ?? '', options.onPart);
    }
  }
  const subject = within('subject', () => template.subject.render(model), options.onPart);
  const problems: TemplateProblem[] = [];
  if (/[\r\n]/.test(subject)) {
    problems.push({ part: 'subject', line: 1, message: 'The rendered subject contains a line break' });
  }
  if (subject.length > maxSubjectLength) {
    problems.push({
      part: 'subject',
      line: 1,
      message: `The rendered subject has ${subject.length} characters; at most ${maxSubjectLength}`,
    });
  }
  return { subject, html, text, missing: dedupe(missing), problems, bytes: used };
}

/** One entry per variable (the first part and line that uses it). */
function dedupe(missing: MissingInPart[]): MissingInPart[] {
  const seen = new Set<string>();
  return missing.filter((entry) => {
    if (seen.has(entry.variable)) return false;
    seen.add(entry.variable);
    return true;
  });
}

/** `user.name is not in the model (html line 3)`. */
export const describeMissing = (entry: MissingInPart): string =>
  `${entry.variable} is not in the model (${entry.part} line ${entry.line})`;
