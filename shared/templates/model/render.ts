import { maxSubjectLength } from '../../platform/mail/headers.ts';
import { missingVariables } from './model-check.ts';
import { type Ast, compilePart, parsePart, type TemplateProblem } from './syntax.ts';

/**
 * A template version compiled for rendering, and its rendering over a model with an optional
 * layout (docs/templates.md). Compiling is done once per version and kept (cache.ts); a render is
 * the three compiled functions plus a walk of the model for missing variables: microseconds.
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

/** Renders a template over `model`; a layout wraps the HTML and text bodies at `{{{@content}}}`. */
export function renderTemplate(
  template: CompiledTemplate,
  model: unknown,
  layout?: CompiledTemplate,
): Rendering {
  const missing: MissingInPart[] = [];
  const check = (part: CompiledPart | undefined, name: string) => {
    if (part === undefined) return;
    for (const entry of missingVariables(part.ast, model)) missing.push({ ...entry, part: name });
  };
  check(template.subject, 'subject');
  check(template.html, 'html');
  check(template.text, 'text');
  let html = template.html?.render(model) ?? null;
  let text = template.text?.render(model) ?? null;
  if (layout !== undefined) {
    if (html !== null && layout.html !== undefined) {
      check(layout.html, 'layout.html');
      html = layout.html.render(model, html);
    }
    if (text !== null && layout.text !== undefined) {
      check(layout.text, 'layout.text');
      text = layout.text.render(model, text);
    }
  }
  const subject = template.subject.render(model);
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
  return { subject, html, text, missing: dedupe(missing), problems };
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
