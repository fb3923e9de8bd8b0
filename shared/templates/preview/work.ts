import { hash } from 'node:crypto';
import { textFromHtml } from '../../platform/mail/text-from-html.ts';
import { CompiledTemplateCache } from '../model/cache.ts';
import {
  astsOf,
  type CompiledTemplate,
  compileParts,
  compileTemplate,
  renderTemplate,
  type TemplateParts,
} from '../model/render.ts';
import { RenderBudgetError } from '../model/render-budget.ts';
import { suggestedModel } from '../model/suggested-model.ts';
import type { TemplateProblem } from '../model/syntax.ts';

/**
 * One preview (`POST /template/render-1.0`), as the preview worker runs it (pool.ts): the parts
 * arrive as text, are compiled here (and kept in this thread's cache), rendered within their
 * budgets, and answered as plain data.
 */

export interface PreviewJob {
  /** A stored version's cache key (`<template id>:<version>:`), or none for inline parts. */
  template: { key?: string; parts: TemplateParts };
  layout?: { key: string; parts: TemplateParts };
  model: unknown;
}

export interface Preview {
  subject: string;
  html: string | null;
  text: string | null;
  errors: TemplateProblem[];
  suggested_model: ReturnType<typeof suggestedModel>;
}

export type PreviewOutcome = { ok: true; preview: Preview } | { ok: false; part: string; message: string };

/**
 * Compiled parts kept by the preview thread. A compiled part holds its parsed tree and Handlebars'
 * generated code, several times the size of its text, so the budget in text bytes is small.
 */
export const previewTemplates = new CompiledTemplateCache(100, 8 * 1024 * 1024);

/**
 * The cache key of inline parts: a SHA-256 of their text, each part's length first so that no two
 * sets of parts hash the same input (and a crafted collision cannot fetch another caller's parts).
 * Hashed as one string, not as JSON: escaping a large HTML part for JSON costs more than the hash.
 */
function inlineKey(parts: TemplateParts): string {
  const length = (part: string | null) => (part === null ? '-' : String(part.length));
  const input = `${parts.subject.length}:${length(parts.html)}:${length(parts.text)}:${parts.subject}${parts.html ?? ''}${parts.text ?? ''}`;
  return `inline:${hash('sha256', input, 'base64url')}`;
}

/** A stored version: it compiled when it was written, so a failure now is a fault. */
function storedTemplate(key: string, parts: TemplateParts, prefix: string): CompiledTemplate {
  const cached = previewTemplates.get(key);
  if (cached !== undefined) return cached;
  const compiled = compileTemplate(parts, prefix);
  if (!compiled.ok) throw new Error(`stored template ${key} does not compile`);
  previewTemplates.set(key, compiled.template);
  return compiled.template;
}

/** The suggested model depends on the template (and layout) only: computed once per pair. */
const suggestions = new WeakMap<
  CompiledTemplate,
  Map<CompiledTemplate | undefined, ReturnType<typeof suggestedModel>>
>();
function suggestedFor(template: CompiledTemplate, layout: CompiledTemplate | undefined) {
  let byLayout = suggestions.get(template);
  if (byLayout === undefined) {
    byLayout = new Map();
    suggestions.set(template, byLayout);
  }
  let model = byLayout.get(layout);
  if (model === undefined) {
    model = suggestedModel(astsOf(template, layout));
    byLayout.set(layout, model);
  }
  return model;
}

/** Compiles (or finds) the parts and renders them; a budget passed is answered with its part. */
export async function runPreview(
  job: PreviewJob,
  onPart: (part: string) => void = () => {},
): Promise<PreviewOutcome> {
  try {
    const errors: TemplateProblem[] = [];
    let template: CompiledTemplate;
    if (job.template.key !== undefined) {
      template = storedTemplate(job.template.key, job.template.parts, '');
    } else {
      const key = inlineKey(job.template.parts);
      const cached = previewTemplates.get(key);
      const compiled =
        cached === undefined ? compileParts(job.template.parts) : { template: cached, problems: [] };
      const overLimit = compiled.problems.find((problem) => problem.limit === true);
      if (overLimit !== undefined) {
        return { ok: false, part: overLimit.part, message: `line ${overLimit.line}: ${overLimit.message}` };
      }
      if (cached === undefined && compiled.problems.length === 0)
        previewTemplates.set(key, compiled.template);
      template = compiled.template;
      errors.push(...compiled.problems);
    }
    const layout =
      job.layout === undefined ? undefined : storedTemplate(job.layout.key, job.layout.parts, 'layout.');
    const rendering = renderTemplate(template, job.model, layout, { onPart });
    errors.push(
      ...rendering.missing.map((entry) => ({
        part: entry.part,
        line: entry.line,
        message: `${entry.variable} is not in the model`,
      })),
      ...rendering.problems,
    );
    onPart('text');
    const text =
      rendering.text !== null || rendering.html === null
        ? rendering.text
        : await textFromHtml(rendering.html);
    return {
      ok: true,
      preview: {
        subject: rendering.subject,
        html: rendering.html,
        text,
        errors,
        suggested_model: suggestedFor(template, layout),
      },
    };
  } catch (error) {
    if (error instanceof RenderBudgetError) return { ok: false, part: error.part, message: error.message };
    if (error instanceof RangeError)
      return { ok: false, part: 'template', message: 'The template is too large or too deep to preview' };
    throw error;
  }
}
