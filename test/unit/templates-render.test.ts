import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { CompiledTemplateCache } from '../../shared/templates/model/cache.ts';
import { missingVariables } from '../../shared/templates/model/model-check.ts';
import {
  type CompiledTemplate,
  compileTemplate,
  renderTemplate,
  type TemplateParts,
} from '../../shared/templates/model/render.ts';
import { suggestedModel } from '../../shared/templates/model/suggested-model.ts';
import { parsePart } from '../../shared/templates/model/syntax.ts';
import { versionStatus, versionToPrune } from '../../shared/templates/model/template.ts';

function compiled(parts: Partial<TemplateParts>, prefix = ''): CompiledTemplate {
  const result = compileTemplate({ subject: '', html: null, text: null, ...parts }, prefix);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.template;
}

function ast(source: string) {
  const parsed = parsePart('html', source);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.ast;
}

describe('template rendering: escaping', () => {
  it('escapes {{x}} in HTML, leaves {{{x}}} raw, and never escapes the subject or the text part', () => {
    const template = compiled({
      subject: 'Order for {{name}}',
      html: '<p>{{name}}</p><div>{{{note}}}</div><a title="{{quote}}">x</a>',
      text: 'Hello {{name}} & {{{note}}}',
    });
    const model = { name: 'Tom & "Jerry" <script>', note: '<b>bold</b>', quote: `it's "x" = \`y\`` };
    const out = renderTemplate(template, model);
    assert.equal(
      out.html,
      '<p>Tom &amp; &quot;Jerry&quot; &lt;script&gt;</p><div><b>bold</b></div><a title="it&#x27;s &quot;x&quot; &#x3D; &#x60;y&#x60;">x</a>',
    );
    assert.equal(out.subject, 'Order for Tom & "Jerry" <script>');
    assert.equal(out.text, 'Hello Tom & "Jerry" <script> & <b>bold</b>');
    assert.deepEqual(out.missing, []);
    assert.deepEqual(out.problems, []);
  });

  it('renders numbers, booleans and explicit nulls as Handlebars does (null is present, and empty)', () => {
    const out = renderTemplate(compiled({ text: '{{a}}|{{b}}|{{c}}|{{d}}' }), {
      a: 0,
      b: false,
      c: null,
      d: 2.5,
    });
    assert.equal(out.text, '0|false||2.5');
    assert.deepEqual(out.missing, []);
  });
});

describe('template rendering: sections', () => {
  it('#if, #unless, else and else if choose by Handlebars truthiness', () => {
    const template = compiled({
      text: '{{#if vip}}VIP{{else if member}}member{{else}}guest{{/if}}/{{#unless paid}}unpaid{{/unless}}/{{#if list}}L{{else}}no list{{/if}}',
    });
    assert.equal(renderTemplate(template, { vip: true, paid: true, list: [1] }).text, 'VIP//L');
    assert.equal(renderTemplate(template, { member: 1, list: [] }).text, 'member/unpaid/no list');
    assert.equal(renderTemplate(template, { vip: 0, member: '' }).text, 'guest/unpaid/no list');
    // Absent conditions are false, never missing.
    assert.deepEqual(renderTemplate(template, {}).missing, []);
  });

  it('#each over lists and objects with @index, @first, @last, @key, block parameters and ../', () => {
    const template = compiled({
      text: '{{#each items}}{{@index}}:{{title}}{{#if @first}}(first){{/if}}{{#if @last}}(last){{/if}} of {{../shop}};{{/each}}|{{#each prices as |price code|}}{{code}}={{price}} {{/each}}|{{#each empty}}x{{else}}none{{/each}}',
    });
    const out = renderTemplate(template, {
      shop: 'Acme',
      items: [{ title: 'A' }, { title: 'B' }, { title: 'C' }],
      prices: { EUR: 10, USD: 12 },
      empty: [],
    });
    assert.equal(out.text, '0:A(first) of Acme;1:B of Acme;2:C(last) of Acme;|EUR=10 USD=12 |none');
    assert.deepEqual(out.missing, []);
  });

  it('#with changes the context, with block parameters, @root and an else branch', () => {
    const template = compiled({
      html: '{{#with user as |u|}}<b>{{name}}</b> {{u.email}} {{@root.site}}{{else}}nobody{{/with}}',
    });
    assert.equal(
      renderTemplate(template, { site: 'S', user: { name: 'Ada', email: 'a@x' } }).html,
      '<b>Ada</b> a@x S',
    );
    const absent = renderTemplate(template, { site: 'S' });
    assert.equal(absent.html, 'nobody');
    assert.deepEqual(absent.missing, [], 'a #with that has an else branch may be absent');
  });
});

describe('template rendering: layouts', () => {
  it('renders the body at {{{@content}}} in the layout, for HTML and text, with the same model', () => {
    const layout = compiled(
      {
        subject: 'ignored',
        html: '<html><body><header>{{brand}}</header>{{{@content}}}<footer>{{brand}}</footer></body></html>',
        text: '{{brand}}\n\n{{{@content}}}\n-- \n{{brand}}',
      },
      'layout.',
    );
    const body = compiled({ subject: 'Hi {{name}}', html: '<p>Hello {{name}}</p>', text: 'Hello {{name}}' });
    const out = renderTemplate(body, { brand: 'Acme & Co', name: '<Ada>' }, layout);
    assert.equal(
      out.html,
      '<html><body><header>Acme &amp; Co</header><p>Hello &lt;Ada&gt;</p><footer>Acme &amp; Co</footer></body></html>',
    );
    assert.equal(out.text, 'Acme & Co\n\nHello <Ada>\n-- \nAcme & Co');
    assert.equal(out.subject, 'Hi <Ada>');
  });

  it('names a variable the layout misses with the layout part', () => {
    const layout = compiled({ html: '<h1>{{brand}}</h1>{{{@content}}}' }, 'layout.');
    const out = renderTemplate(compiled({ html: '<p>x</p>' }), {}, layout);
    assert.deepEqual(out.missing, [{ variable: 'brand', part: 'layout.html', line: 1 }]);
  });
});

describe('template rendering: missing variables', () => {
  it('names each missing variable with its part and line, following the model into lists', () => {
    const template = compiled({
      subject: 'Order {{order.id}}',
      html: '<p>Hi {{user.name}}</p>\n<ul>\n{{#each items}}\n<li>{{title}} {{price}}</li>\n{{/each}}\n</ul>',
      text: 'Hi {{user.name}}\n\n{{nickname}}',
    });
    const out = renderTemplate(template, {
      order: { id: 7 },
      user: {},
      items: [{ title: 'a', price: 1 }, { title: 'b' }, { price: 3 }],
    });
    assert.deepEqual(out.missing, [
      { variable: 'user.name', part: 'html', line: 1 },
      { variable: 'items[1].price', part: 'html', line: 4 },
      { variable: 'items[2].title', part: 'html', line: 4 },
      { variable: 'nickname', part: 'text', line: 3 },
    ]);
  });

  it('looks only at the branch the model takes, and needs #each targets unless there is an else', () => {
    const source =
      '{{#if user}}{{user.name}}{{/if}}{{#each items}}{{x}}{{/each}}{{#each other}}{{x}}{{else}}-{{/each}}';
    assert.deepEqual(missingVariables(ast(source), {}), [{ variable: 'items', line: 1 }]);
    assert.deepEqual(missingVariables(ast(source), { user: {}, items: [] }), [
      { variable: 'user.name', line: 1 },
    ]);
  });

  it('counts descending into null or a string as missing, and names odd keys in brackets', () => {
    assert.deepEqual(missingVariables(ast('{{a.b}} {{[first name]}}'), { a: null }), [
      { variable: 'a.b', line: 1 },
      { variable: '["first name"]', line: 1 },
    ]);
    assert.deepEqual(missingVariables(ast('{{s.x}}'), { s: 'text' }), [{ variable: 's.x', line: 1 }]);
  });

  it('walks a repeated statement once per context, naming its first line, and tells look-alikes apart', () => {
    const block = '{{#each items}}{{name}}{{/each}}';
    const model = { items: [{ name: 'a' }, {}], groups: [{ items: [{}] }, { items: [{ name: 'b' }, {}] }] };
    // The same block at lines 1 and 2 (same context), then inside each group (other contexts).
    assert.deepEqual(missingVariables(ast(`${block}\n${block}\n{{#each groups}}${block}{{/each}}`), model), [
      { variable: 'items[1].name', line: 1 },
      { variable: 'groups[0].items[0].name', line: 3 },
      { variable: 'groups[1].items[1].name', line: 3 },
    ]);
    // Same text, other lookups: a key with a dot, `this.` and `../` against a block parameter.
    assert.deepEqual(
      missingVariables(ast('{{a.b}}\n{{[a.b]}}\n{{#each l as |a|}}{{a.b}} {{this.a}} {{../a.c}}{{/each}}'), {
        a: { b: 1 },
        l: [{ b: 2 }],
      }),
      [
        { variable: '["a.b"]', line: 2 },
        { variable: 'l[0].a', line: 3 },
        { variable: 'a.c', line: 3 },
      ],
    );
    // Same condition, other branches: both are walked.
    assert.deepEqual(
      missingVariables(
        ast('{{#if on}}{{x}}{{/if}}\n{{#if on}}{{y}}{{/if}}\n{{#if on}}{{x}}{{else}}{{z}}{{/if}}'),
        {
          on: true,
        },
      ),
      [
        { variable: 'x', line: 1 },
        { variable: 'y', line: 2 },
      ],
    );
  });
});

describe('template rendering: prototype access renders nothing dangerous', () => {
  it('constructor, __proto__ and prototype methods are not reachable; they are missing variables', () => {
    const template = compiled({
      html: '[{{constructor.constructor}}][{{__proto__}}][{{name.constructor}}][{{toString}}][{{#with __proto__}}{{polluted}}{{/with}}][{{name.length}}]',
    });
    const out = renderTemplate(template, { name: 'Ada' });
    assert.equal(out.html, '[][][][][][3]');
    assert.deepEqual(
      out.missing.map((entry) => entry.variable),
      ['constructor', '__proto__', 'name.constructor', 'toString'],
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('a model whose own keys are __proto__ and constructor (JSON.parse makes them own) is data, not a prototype', () => {
    const model = JSON.parse('{"__proto__":{"polluted":"yes"},"constructor":{"name":"x"}}');
    const out = renderTemplate(compiled({ text: '{{__proto__.polluted}} {{constructor.name}}' }), model);
    assert.equal(out.text, 'yes x');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('template syntax: only what cannot run code', () => {
  const refused: Array<[string, RegExp]> = [
    ['{{> header}}', /Partials/],
    ['{{lookup a b}}', /helpers are not available/],
    ['{{log "x"}}', /helpers are not available/],
    ['{{#custom x}}y{{/custom}}', /only #if, #unless, #each and #with/],
    ['{{#if (eq a b)}}x{{/if}}', /exactly one variable/],
    ['{{#if a includeZero=true}}x{{/if}}', /takes no options/],
    ['{{^x}}y{{/x}}', /sections are not available/],
    ['{{"literal"}}', /no literals/],
    ['{{@index}}', /only set inside/],
    ['{{@foo}}', /is not a variable/],
    ['{{#if a as |b|}}x{{/if}}', /no block parameters/],
    ['{{if}}', /is a block helper/],
    ['{{*decorator}}', /Decorators/],
  ];
  for (const [source, message] of refused) {
    it(`refuses ${source}`, () => {
      const parsed = parsePart('html', source);
      assert.equal(parsed.ok, false);
      if (!parsed.ok) assert.match(parsed.problems[0]?.message ?? '', message);
    });
  }

  it('reports a parse error with its line', () => {
    const parsed = parsePart('text', 'line one\nline two {{#if a}}\nthree\n{{/each}}');
    assert.equal(parsed.ok, false);
    if (!parsed.ok) {
      assert.equal(parsed.problems[0]?.part, 'text');
      assert.equal(parsed.problems[0]?.line, 4);
      assert.match(
        parsed.problems[0]?.message ?? '',
        /`\{\{\/each\}\}` on line 4 does not close `\{\{#if\}\}` opened on line 2/,
      );
    }
    const unclosed = parsePart('html', 'a\nb\n{{ name');
    assert.equal(unclosed.ok, false);
    if (!unclosed.ok) assert.equal(unclosed.problems[0]?.line, 3);
  });

  it('refuses blocks nested deeper than the limit', () => {
    const source = `${'{{#if a}}'.repeat(70)}x${'{{/if}}'.repeat(70)}`;
    const parsed = parsePart('html', source);
    assert.equal(parsed.ok, false);
  });

  it('the rendered subject may not contain a line break', () => {
    const out = renderTemplate(compiled({ subject: 'Hi {{name}}', text: 'x' }), {
      name: 'a\r\nBcc: x@example.net',
    });
    assert.deepEqual(out.problems, [
      { part: 'subject', line: 1, message: 'The rendered subject contains a line break' },
    ]);
  });
});

describe('suggested model', () => {
  it('builds the model a template asks for from its syntax', () => {
    const model = suggestedModel([
      ast('Hi {{user.name}} {{#if vip}}VIP{{/if}}'),
      ast(
        '{{#each items as |item|}}{{item.title}} {{price}} {{../currency}}{{/each}}{{#with address}}{{city}}{{/with}}{{@root.site}}{{#each tags}}{{this}}{{/each}}',
      ),
    ]);
    assert.deepEqual(model, {
      user: { name: 'name_Value' },
      vip: true,
      items: [{ title: 'title_Value', price: 'price_Value' }],
      currency: 'currency_Value',
      address: { city: 'city_Value' },
      site: 'site_Value',
      tags: ['tags_Value'],
    });
  });

  it('an object wins over a placeholder, and __proto__ stays an own key', () => {
    const model = suggestedModel([ast('{{user}} {{user.name}} {{__proto__.x}}')]);
    assert.deepEqual(Object.keys(model), ['user', '__proto__']);
    assert.deepEqual(model.user, { name: 'name_Value' });
    assert.equal(({} as Record<string, unknown>).x, undefined);
  });
});

describe('versions and the compiled-template cache', () => {
  it('derives each version status and which version an update removes at the limit', () => {
    const head = { publishedVersion: 3, everPublished: [1, 3] };
    assert.equal(versionStatus(head, 3), 'published');
    assert.equal(versionStatus(head, 1), 'superseded');
    assert.equal(versionStatus(head, 2), 'draft');
    const versions = Array.from({ length: 100 }, (_, index) => ({ version: index + 1 }));
    assert.equal(versionToPrune({ publishedVersion: 1 }, versions), 2);
    assert.equal(versionToPrune({ publishedVersion: 1 }, versions.slice(1)), undefined);
  });

  it('evicts the least recently used entries past its bounds', () => {
    const cache = new CompiledTemplateCache(2, 1_000_000);
    const entry = compiled({ text: 'x' });
    cache.set('a', entry);
    cache.set('b', entry);
    cache.get('a');
    cache.set('c', entry);
    assert.equal(cache.get('b'), undefined);
    assert.ok(cache.get('a'));
    assert.ok(cache.get('c'));
    const small = new CompiledTemplateCache(10, 5);
    small.set('big', compiled({ text: 'more than five bytes' }));
    assert.equal(small.size, 1, 'the newest entry stays even when it alone passes the byte bound');
  });
});
