import assert from 'node:assert/strict';
import { afterAll, describe, it } from 'vitest';
import { missingVariables } from '../../shared/templates/model/model-check.ts';
import { maxBlockDepth, maxEachDepth, maxStatementsPerPart } from '../../shared/templates/model/prescan.ts';
import { compileTemplate, renderTemplate, type TemplateParts } from '../../shared/templates/model/render.ts';
import {
  maxRenderedBytes,
  maxRenderSteps,
  RenderBudgetError,
} from '../../shared/templates/model/render-budget.ts';
import { parsePart } from '../../shared/templates/model/syntax.ts';
import { PreviewPool } from '../../shared/templates/preview/pool.ts';

/** Every budget of docs/security.md ("Limits", Templates) at its edge: the largest accepted input and one step over. */

const problemOf = (source: string, part = 'html') => {
  const parsed = parsePart(part, source);
  return parsed.ok ? undefined : parsed.problems[0];
};

const compiled = (parts: Partial<TemplateParts>) => {
  const result = compileTemplate({ subject: '', html: null, text: null, ...parts });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.template;
};

function budgetError(work: () => unknown): RenderBudgetError {
  try {
    work();
  } catch (error) {
    if (error instanceof RenderBudgetError) return error;
    throw error;
  }
  throw new Error('no budget error');
}

describe('pre-scan before parsing', () => {
  const nestedIf = (depth: number) => `${'{{#if a}}'.repeat(depth)}x${'{{/if}}'.repeat(depth)}`;
  const nestedEach = (depth: number) => `${'{{#each a}}'.repeat(depth)}x${'{{/each}}'.repeat(depth)}`;

  it(`blocks nest ${maxBlockDepth} deep, not one more`, () => {
    assert.equal(problemOf(nestedIf(maxBlockDepth)), undefined);
    assert.deepEqual(problemOf(nestedIf(maxBlockDepth + 1)), {
      part: 'html',
      line: 1,
      message: '`{{#if}}` on line 1 is the 17th block open at once; blocks nest at most 16 deep',
      limit: true,
    });
  });

  it(`#each nests ${maxEachDepth} deep inside #each, not one more`, () => {
    assert.equal(problemOf(nestedEach(maxEachDepth)), undefined);
    assert.match(
      problemOf(nestedEach(maxEachDepth + 1))?.message ?? '',
      /4th \{\{#each\}\} inside \{\{#each\}\}; at most 3/,
    );
    // Other blocks between the loops do not hide them.
    assert.ok(problemOf(`{{#each a}}{{#if b}}${nestedEach(maxEachDepth)}{{/if}}{{/each}}`) !== undefined);
  });

  it(`a part has ${maxStatementsPerPart.toLocaleString('en-US')} tags, not one more`, () => {
    assert.equal(problemOf('{{a}}'.repeat(maxStatementsPerPart)), undefined);
    assert.match(
      problemOf('{{a}}'.repeat(maxStatementsPerPart + 1))?.message ?? '',
      /More than 10,000 tags in one part/,
    );
  });

  it("the review's 500 KB of {{a}} and 26 nested {{#if}} are refused before parsing", () => {
    assert.match(problemOf('{{a}}'.repeat(100_000))?.message ?? '', /tags in one part/);
    assert.match(problemOf(nestedIf(26))?.message ?? '', /nest at most 16 deep/);
  });

  it('escaped mustaches, comments with braces and whitespace control are read as Handlebars reads them', () => {
    assert.equal(
      problemOf('\\{{#if}} {{!-- {{#each}} }} --}} {{~#if a~}}x{{~/if~}} {{{b}}} {{! c }}'),
      undefined,
    );
  });
});

describe('parse errors in words (one test per message)', () => {
  it('a block that is never closed', () => {
    assert.deepEqual(problemOf('{{#if a}}\nhello'), {
      part: 'html',
      line: 1,
      message: '`{{#if}}` opened on line 1 is never closed; add `{{/if}}`',
    });
  });

  it('a closing tag with nothing open', () => {
    assert.equal(
      problemOf('a\n{{/each}}')?.message,
      '`{{/each}}` on line 2 closes no block: nothing is open here',
    );
  });

  it('a closing tag of another block', () => {
    assert.equal(
      problemOf('{{#each a}}\n{{#if b}}\n{{/each}}')?.message,
      '`{{/each}}` on line 3 does not close `{{#if}}` opened on line 2; close that first with `{{/if}}`',
    );
  });

  it('a tag without its closing braces', () => {
    const problem = problemOf('a\n{{ name');
    assert.equal(problem?.line, 2);
    assert.equal(problem?.message, 'The tag `{{ name` opened here is never closed with `}}`');
  });

  it('a comment without its end', () => {
    assert.equal(
      problemOf('{{!-- note')?.message,
      'The comment `{{!--` opened here is never closed with `--}}`',
    );
  });

  it('{{else}} outside a block', () => {
    assert.equal(
      problemOf('{{else}}')?.message,
      '`{{else}}` at column 1 stands outside a block, or is the second `{{else}}` of the same block',
    );
  });

  it('triple braces closed with two, and two closed with three', () => {
    assert.equal(problemOf('{{{a}}')?.message, 'The tag `{{{a}}` opened here is never closed with `}}}`');
    assert.equal(
      problemOf('{{a}}}')?.message,
      '`}}}` at column 4 ends a tag opened with `{{`: write `{{x}}` or `{{{x}}}`',
    );
  });

  it('an empty tag', () => {
    assert.equal(
      problemOf('x {{}} y')?.message,
      'A tag at column 5 has no variable name: write one between the braces, e.g. `{{name}}`',
    );
  });

  it('raw blocks', () => {
    assert.equal(
      problemOf('{{{{raw}}}} {{x}} {{{{/raw}}}}')?.message,
      'Raw blocks ({{{{raw}}}}) are not available',
    );
  });
});

describe('the model check is linear in nesting', () => {
  it('16 nested blocks walk and name what is missing (the signatures never nest)', () => {
    const source = `${'{{#with a}}'.repeat(16)}{{b}}${'{{/with}}'.repeat(16)}`;
    const parsed = parsePart('html', source);
    assert.ok(parsed.ok);
    let model: Record<string, unknown> = {};
    for (let level = 0; level < 16; level++) model = { a: model };
    assert.deepEqual(missingVariables(parsed.ast, model), [{ variable: `${'a.'.repeat(16)}b`, line: 1 }]);
  });
});

describe('render budget', () => {
  it(`statements and loop items: ${maxRenderSteps.toLocaleString('en-US')} run, not one more`, () => {
    const template = compiled({ text: '{{#each a}}{{/each}}' });
    // The block is one step, each item one more.
    const items = (count: number) => ({ a: Array.from({ length: count }, () => 0) });
    assert.equal(renderTemplate(template, items(maxRenderSteps - 1)).text, '');
    const error = budgetError(() => renderTemplate(template, items(maxRenderSteps)));
    assert.equal(error.part, 'text');
    assert.match(error.message, /The text part would run more than 100,000 statements/);
  });

  it(`output: ${maxRenderedBytes.toLocaleString('en-US')} bytes for subject, HTML and text together, not one more`, () => {
    const template = compiled({ subject: 'S', html: '{{a}}' });
    // `&` is escaped to `&amp;`: 5 bytes; the measure counts what Handlebars writes.
    const fits = { a: `${'&'.repeat(1_199_999)}xxxx` };
    const out = renderTemplate(template, fits);
    assert.equal(Buffer.byteLength(out.subject) + Buffer.byteLength(out.html ?? ''), maxRenderedBytes);
    assert.equal(out.bytes, maxRenderedBytes);
    const error = budgetError(() => renderTemplate(template, { a: `${fits.a}x` }));
    assert.equal(error.part, 'html');
    assert.match(error.message, /The html part would take the rendering past 6,000,000 bytes/);
  });

  it('a layout counts with the body it wraps, and names its part', () => {
    const body = compiled({ subject: '', html: '{{{a}}}' });
    const layout = compileTemplate({ subject: '', html: '<p>{{{@content}}}</p>', text: null }, 'layout.');
    assert.ok(layout.ok);
    const model = { a: 'x'.repeat(maxRenderedBytes - 7) };
    assert.equal(renderTemplate(body, model, layout.template).bytes, maxRenderedBytes);
    const error = budgetError(() => renderTemplate(body, { a: `${model.a}x` }, layout.template));
    assert.equal(error.part, 'layout.html');
  });

  it("the review's 307-byte request that rendered 12.6 MB is refused before rendering", () => {
    const template = compiled({
      text: '{{#each a}}{{#each ../a}}{{#each ../../a}}{{s}}{{/each}}{{/each}}{{/each}}',
    });
    const model = { a: Array.from({ length: 20 }, () => ({ s: 'y'.repeat(1600) })) };
    assert.match(budgetError(() => renderTemplate(template, model)).message, /past 6,000,000 bytes/);
  });
});

describe('previews on a worker thread', () => {
  const pool = new PreviewPool({ workers: 1, deadlineMs: 60_000, heapMb: 128 });
  const quick = new PreviewPool({ workers: 1, deadlineMs: 1, heapMb: 128 });
  afterAll(async () => {
    await pool.close();
    await quick.close();
  });

  it('renders, with problems and the suggested model as data', async () => {
    const preview = await pool.run({
      template: { parts: { subject: 'Hi {{name}}', html: '<p>{{plan.title}}</p>', text: null } },
      model: { name: 'Ada' },
    });
    assert.equal(preview.subject, 'Hi Ada');
    assert.equal(preview.html, '<p></p>');
    assert.deepEqual(preview.errors, [{ part: 'html', line: 1, message: 'plan is not in the model' }]);
    assert.deepEqual(preview.suggested_model, { name: 'name_Value', plan: { title: 'title_Value' } });
  });

  it('answers a part past its budget with the part', async () => {
    await assert.rejects(
      pool.run({
        template: { parts: { subject: '', html: null, text: '{{#each a}}{{/each}}' } },
        model: { a: Array.from({ length: maxRenderSteps }, () => 0) },
      }),
      (error: unknown) => error instanceof RenderBudgetError && error.part === 'text',
    );
  });

  it('stops a job at its deadline, names the part it was on, and serves the next job on a new worker', async () => {
    const slow = { subject: '', html: '{{a}} '.repeat(maxStatementsPerPart), text: null };
    await assert.rejects(quick.run({ template: { parts: slow }, model: {} }), (error: unknown) => {
      assert.ok(error instanceof RenderBudgetError);
      assert.match(error.message, /The preview stopped at the \S+ part after 0.001 s/);
      return true;
    });
    const after = await pool.run({
      template: { parts: { subject: 'ok', html: null, text: 'x' } },
      model: {},
    });
    assert.equal(after.subject, 'ok');
  });
});
