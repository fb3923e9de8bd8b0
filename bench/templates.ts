import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dataResponse } from '../shared/platform/http/envelope.ts';
import { jsonBody } from '../shared/platform/middleware/json-body.ts';
import { validateInput } from '../shared/platform/middleware/validate-input.ts';
import { missingVariables } from '../shared/templates/model/model-check.ts';
import { compileParts } from '../shared/templates/model/render.ts';
import { templateRenderRequest } from '../shared/templates/schemas.ts';
import { renderPreview } from '../shared/templates/templates.ts';
import { type Caller, call } from './service.ts';
import { figure, fmt, fmtFigure, progress, sideBySide } from './stats.ts';
import { checkTarget } from './targets.ts';

/**
 * Templates (docs/templates.md), measured side by side in one run:
 * - accepting a templated message (manual-wait) against accepting the same rendered subject, HTML
 *   and text as a plain add: the template path reads the template record with the sender's domain
 *   (one BatchGetItem instead of the plain add's GetItem) and renders from the compiled-version
 *   cache. Target: ≤ 1.15 ×.
 * - `render` of a 50 KB template (HTML and text parts) against GET /health through the local
 *   gateway: the editor's preview of its own content (inline parts) and of a stored version
 *   (alias). Target (the preview an editor calls on each keystroke): ≤ 1.3 ×. Beside it, an empty
 *   render (the authenticated chain alone) and the stages of the 50 KB render timed one by one.
 * Each round times the two calls back to back and keeps their ratio; figures are the medians.
 */

/** A realistic order confirmation: about 5 KB of HTML with a loop over the items, and a text part. */
function orderTemplate() {
  const rows =
    '{{#each items}}<tr><td class="name">{{title}}</td><td class="qty">{{quantity}}</td><td class="price">{{price}}</td></tr>{{/each}}';
  const style =
    '<style>body{font-family:sans-serif}td{padding:4px 8px}.price{text-align:right}</style>'.repeat(12);
  const html = `<!DOCTYPE html><html><head><meta charset="utf-8">${style}</head><body>
<h1>Thank you for your order, {{customer.first_name}}!</h1>
<p>Order <b>{{order.number}}</b> placed on {{order.date}} will be shipped to:</p>
<address>{{customer.name}}<br>{{address.street}}<br>{{address.postcode}} {{address.city}}</address>
<table>${rows}</table>
<p>Total: <b>{{order.total}}</b></p>
{{#if note}}<p class="note">{{note}}</p>{{/if}}
<p>${'Questions? Answer this mail or call us; we are glad to help. '.repeat(20)}</p>
</body></html>`;
  const text = `Thank you for your order, {{customer.first_name}}!
Order {{order.number}} placed on {{order.date}} ships to {{customer.name}}, {{address.street}}, {{address.postcode}} {{address.city}}.
{{#each items}}- {{title}} x {{quantity}}: {{price}}
{{/each}}Total: {{order.total}}
`;
  return { subject: 'Order {{order.number}} confirmed', html, text };
}

const orderModel = {
  customer: { first_name: 'Ada', name: 'Ada Lovelace' },
  order: { number: 'A-1001', date: '2026-11-22', total: '€ 54.00' },
  address: { street: '12 St James’s Square', postcode: 'SW1Y 4JH', city: 'London' },
  items: Array.from({ length: 6 }, (_, index) => ({
    title: `Item ${index} <special>`,
    quantity: index + 1,
    price: '€ 9.00',
  })),
  note: 'Leave at the door & ring twice',
};

/** About 50 KB of HTML (a newsletter of repeated sections with variables and a loop) and its text. */
function newsletterTemplate() {
  const section = (index: number) =>
    `<table class="row"><tr><td><h2>Section ${index}: {{title}}</h2><p>Dear {{user.first_name}}, here is what happened this week in {{city}}. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>{{#each items}}<p><a href="{{url}}">{{name}}</a> {{price}}</p>{{/each}}</td></tr></table>\n`;
  let html = '';
  let text = '';
  for (let index = 0; html.length + text.length < 50 * 1024; index++) {
    html += section(index);
    if (index % 4 === 0)
      text += `Section ${index}: {{title}} in {{city}}\n{{#each items}}- {{name}} {{price}} {{url}}\n{{/each}}`;
  }
  return { subject: 'This week in {{city}}, {{user.first_name}}', html, text };
}

const newsletterModel = {
  title: 'News',
  user: { first_name: 'Ada' },
  city: 'London',
  items: Array.from({ length: 3 }, (_, index) => ({
    url: `https://example.test/${index}`,
    name: `Item ${index}`,
    price: '1.00',
  })),
};

async function ok(who: Caller, path: string, body: unknown, query = ''): Promise<any> {
  const response = await call(who, 'POST', `${path}${query}`, body);
  if (response.status !== 200)
    throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.data;
}

/** Median µs of one call of `fn`, over `rounds` calls after 20 warm-up calls. */
async function microseconds(rounds: number, fn: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let round = -20; round < rounds; round++) {
    const t0 = performance.now();
    await fn();
    if (round >= 0) times.push((performance.now() - t0) * 1000);
  }
  return figure(times).median;
}

/**
 * What moving `requestBody` up and `responseBody` down costs through fetch and a bare node:http
 * server in this process (no gateway, no function), beyond a GET with a small answer: median µs of
 * the per-round difference.
 */
async function transferMicroseconds(rounds: number, requestBody: string, responseBody: string) {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      Buffer.concat(chunks).toString('utf8');
      const body = Buffer.from(request.method === 'GET' ? '{"data":{"status":"ok"}}' : responseBody);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const headers = { authorization: 'Bearer x', 'content-type': 'application/json' };
  const differences: number[] = [];
  for (let round = -20; round < rounds; round++) {
    const t0 = performance.now();
    await (await fetch(url, { headers })).text();
    const t1 = performance.now();
    await (await fetch(url, { method: 'POST', headers, body: requestBody })).text();
    const t2 = performance.now();
    if (round >= 0) differences.push((t2 - t1 - (t1 - t0)) * 1000);
  }
  await new Promise((resolve) => server.close(resolve));
  return figure(differences).median;
}

/**
 * Where a render's time goes: each stage of one inline render of `body`, run alone in this process
 * (no network, no middleware chain), with the same code the route runs.
 */
async function renderStages(
  body: { subject: string; html: string; text: string; model: unknown },
  account: string,
) {
  const raw = JSON.stringify(body);
  type Before = (request: unknown) => void;
  const parse = jsonBody().before as Before;
  const validate = validateInput(templateRenderRequest as never, 'body').before as Before;
  const event = () => ({
    body: raw,
    isBase64Encoded: false,
    headers: { 'content-type': 'application/json' },
  });
  const parsed: unknown = JSON.parse(raw);
  const input = templateRenderRequest.parse(parsed);
  const { template } = compileParts({ subject: body.subject, html: body.html, text: body.text });
  const parts = [template.subject, template.html, template.text].filter((part) => part !== undefined);
  const preview = await renderPreview(input, account);
  const response = dataResponse(preview).body;
  const rounds = 200;
  return {
    requestBytes: Buffer.byteLength(raw),
    responseBytes: Buffer.byteLength(response),
    stages: [
      ['client: JSON.stringify of the request', await microseconds(rounds, () => JSON.stringify(body))],
      ['JSON.parse of the body (json-body)', await microseconds(rounds, () => parse({ event: event() }))],
      [
        'schema validation (validate-input)',
        await microseconds(rounds, () => validate({ event: { ...event(), jsonBody: parsed } })),
      ],
      [
        'the action: cache key, compiled parts from the cache, walk, render, suggested model',
        await microseconds(rounds, () => renderPreview(input, account)),
      ],
      [
        '… of which the missing-variable walk',
        await microseconds(rounds, () => parts.map((part) => missingVariables(part.ast, body.model))),
      ],
      [
        '… of which Handlebars (subject, HTML, text)',
        await microseconds(rounds, () => parts.map((part) => part.render(body.model))),
      ],
      ['JSON.stringify of the response', await microseconds(rounds, () => dataResponse(preview))],
      ['client: JSON.parse of the response', await microseconds(rounds, () => JSON.parse(response))],
      [
        'the same request and answer bytes through fetch and a bare node:http server, minus a small GET',
        await transferMicroseconds(rounds, raw, response),
      ],
    ] as Array<[string, number]>,
  };
}

export async function templatesBench(who: Caller, sender: string, rounds: number): Promise<string[]> {
  progress('templates: templated add against the same content as plain add; render against health');
  const suffix = Date.now().toString(36);
  const order = { alias: `bench-order-${suffix}`, name: 'Bench order', ...orderTemplate() };
  await ok(who, '/template/add-1.0', order);
  await ok(who, '/template/publish-1.0', { alias: order.alias });
  const rendered = await ok(who, '/template/render-1.0', { alias: order.alias, model: orderModel });
  if (rendered.errors.length > 0) throw new Error(`bench template: ${JSON.stringify(rendered.errors)}`);
  const base = {
    message_sender: sender,
    to: ['Ada <ada@recipient.test>'],
    scheduling: { mode: 'manual-wait' },
  };
  const templated = { ...base, template: { alias: order.alias, model: orderModel } };
  const plain = {
    ...base,
    subject: rendered.subject,
    content: { kind: 'mixed', text: rendered.text, html: rendered.html },
  };
  const add = await sideBySide(
    rounds,
    () => ok(who, '/message/add-1.0', templated),
    () => ok(who, '/message/add-1.0', plain),
  );

  const news = { alias: `bench-news-${suffix}`, name: 'Bench newsletter', ...newsletterTemplate() };
  const newsBytes =
    Buffer.byteLength(news.subject) + Buffer.byteLength(news.html) + Buffer.byteLength(news.text);
  await ok(who, '/template/add-1.0', news);
  await ok(who, '/template/publish-1.0', { alias: news.alias });
  const health = () => call(who, 'GET', '/health');
  const inline = { subject: news.subject, html: news.html, text: news.text, model: newsletterModel };
  const renderInline = await sideBySide(rounds, () => ok(who, '/template/render-1.0', inline), health);
  const renderStored = await sideBySide(
    rounds,
    () => ok(who, '/template/render-1.0', { alias: news.alias, model: newsletterModel }),
    health,
  );
  // The same route with nothing to render: the authenticated chain (token, account, scopes, body) alone.
  const renderEmpty = await sideBySide(
    rounds,
    () => ok(who, '/template/render-1.0', { subject: 'Hello', model: {} }),
    health,
  );
  const htmlOnly = { subject: news.subject, html: news.html, model: newsletterModel };
  const renderDerived = await sideBySide(
    Math.max(5, Math.floor(rounds / 3)),
    () => ok(who, '/template/render-1.0', htmlOnly),
    health,
  );

  const stages = await renderStages(inline, 'bench-render-stages');
  const stageSum = stages.stages
    .filter(([name]) => !name.startsWith('…'))
    .reduce((sum, [, us]) => sum + us, 0);
  const kb = (bytes: number) => `${fmt(bytes / 1024, 0)} KB`;
  const orderBytes =
    Buffer.byteLength(order.subject) + Buffer.byteLength(order.html) + Buffer.byteLength(order.text);
  progress(
    `  templated add ${fmt(add.a.median)} ms vs plain ${fmt(add.b.median)} ms; render ${fmt(renderInline.a.median)} ms vs health ${fmt(renderInline.b.median)} ms`,
  );
  return [
    '### Templates (accept with a template; render)',
    '',
    `Side by side in one run, ${rounds} rounds after 3 warm-up rounds; each round times the two calls back to back and the ratio is taken per round.`,
    '',
    '| operation | ms | compared with | ms | ratio | target |',
    '|---|---:|---|---:|---:|---|',
    `| add with a template (${kb(orderBytes)} order confirmation, HTML and text, 6 items; manual-wait) | ${fmtFigure(add.a)} | add of the same rendered subject, HTML and text | ${fmtFigure(add.b)} | ${fmtFigure(add.ratio, 2)} | ≤ 1.15: ${checkTarget('template-add', fmtFigure(add.ratio, 2), add.ratio.median <= 1.15)} |`,
    `| render, inline parts (${kb(newsBytes)} newsletter, HTML and text) | ${fmtFigure(renderInline.a)} | GET /health | ${fmtFigure(renderInline.b)} | ${fmtFigure(renderInline.ratio, 2)} | ≤ 1.3: ${checkTarget('template-render', fmtFigure(renderInline.ratio, 2), renderInline.ratio.median <= 1.3)} |`,
    `| render with nothing to render (subject \`Hello\`, empty model): the authenticated chain alone | ${fmtFigure(renderEmpty.a)} | GET /health | ${fmtFigure(renderEmpty.b)} | ${fmtFigure(renderEmpty.ratio, 2)} | (token, account, scopes, JSON body) |`,
    `| render, stored version by alias (the same template) | ${fmtFigure(renderStored.a)} | GET /health | ${fmtFigure(renderStored.b)} | ${fmtFigure(renderStored.ratio, 2)} | (reads the template record) |`,
    `| render, inline HTML only (text derived from the HTML) | ${fmtFigure(renderDerived.a)} | GET /health | ${fmtFigure(renderDerived.b)} | ${fmtFigure(renderDerived.ratio, 2)} | (html-to-text on ${kb(Buffer.byteLength(news.html))}) |`,
    '',
    `Where the inline render's time goes: each stage run alone in this process (the benchmark's client and the local host share it), median of 200 calls, against the medians above (render − health ${fmt(renderInline.a.median - renderInline.b.median, 2)} ms; the chain alone, empty render − health, ${fmt(renderEmpty.a.median - renderEmpty.b.median, 2)} ms):`,
    '',
    '| stage of one render of the 50 KB newsletter | µs |',
    '|---|---:|',
    ...stages.stages.map(([name, us]) => `| ${name} | ${fmt(us, 0)} |`),
    `| sum of the stages above (the two "of which" rows are inside the action) | ${fmt(stageSum, 0)} |`,
    `| render − empty render through the gateway, for comparison with the sum | ${fmt((renderInline.a.median - renderEmpty.a.median) * 1000, 0)} |`,
    '',
    `The request carries ${kb(stages.requestBytes)} and the answer ${kb(stages.responseBytes)} (the rendered HTML and text, escaped for JSON, and the suggested model); health carries neither.`,
    '',
  ];
}

/**
 * A newsletter of `sections` sections of 250 bytes and 5 tags each (the largest allowed template is
 * 2,000 of them: 500,000 bytes and 10,000 tags in its HTML); `run` makes its text unique, so that
 * no cache serves it.
 */
function sectionsTemplate(sections: number, run: number) {
  const section = (index: number) =>
    `<p>${index === 0 ? String(run).padStart(8, '0') : 'Weekly  '} {{user.name}}: {{#each items}}<a href="{{url}}">{{name}}</a>{{/each}} ${'lorem ipsum dolor sit amet '.repeat(7)}</p>\n`;
  let html = '';
  for (let index = 0; index < sections; index++) html += section(index).padEnd(250, '.').slice(0, 250);
  return { subject: 'News', html, text: null };
}

/**
 * Linearity of a preview of the largest allowed template: the whole preview work of inline parts
 * with nothing cached (pre-scan, parse, Handlebars' compile, the budget walk, the missing-variable
 * check, the render and the suggested model; not the text derived from HTML, which is measured
 * with the HTML-to-text section), in this process, at half the largest template and at the largest.
 */
export async function templateLinearity(rounds: number): Promise<string[]> {
  progress('templates: preview of the largest allowed template against half of it');
  const { runPreview } = await import('../shared/templates/preview/work.ts');
  const model = {
    user: { name: 'Ada' },
    items: Array.from({ length: 3 }, (_, index) => ({
      url: `https://example.test/${index}`,
      name: `Item ${index}`,
    })),
  };
  let run = 0;
  const once = async (sections: number) => {
    const parts = sectionsTemplate(sections, run++);
    const started = performance.now();
    // A text part is given (the HTML itself), so no text is derived from the HTML.
    const outcome = await runPreview({ template: { parts: { ...parts, text: 'x' } }, model });
    const elapsed = performance.now() - started;
    if (!outcome.ok || outcome.preview.errors.length > 0)
      throw new Error(`bench template: ${JSON.stringify(outcome).slice(0, 300)}`);
    return { elapsed, bytes: Buffer.byteLength(parts.html) };
  };
  await once(200);
  const half: number[] = [];
  const full: number[] = [];
  const ratios: number[] = [];
  let bytes = { half: 0, full: 0 };
  for (let round = 0; round < rounds; round++) {
    const a = await once(1000);
    const b = await once(2000);
    bytes = { half: a.bytes, full: b.bytes };
    half.push(a.elapsed);
    full.push(b.elapsed);
    ratios.push(b.elapsed / a.elapsed);
  }
  const ratio = figure(ratios);
  progress(
    `  largest template ${fmt(figure(full).median)} ms, half ${fmt(figure(half).median)} ms, ratio ${fmt(ratio.median, 2)}`,
  );
  return [
    '### Templates: linear work for the largest allowed template',
    '',
    `The preview's whole work on inline parts with nothing cached (pre-scan, parse, Handlebars' compile, the render budget, the missing-variable check, the render, the suggested model), in this process, ${rounds} rounds; each round times half the template, then all of it, and the ratio is taken per round.`,
    '',
    '| input | ms | ratio to half | target |',
    '|---|---:|---:|---|',
    `| half: ${fmt(bytes.half / 1000, 0)} KB, 5,000 tags | ${fmtFigure(figure(half))} | 1 | |`,
    `| the largest allowed: ${fmt(bytes.full / 1000, 0)} KB, 10,000 tags | ${fmtFigure(figure(full))} | ${fmtFigure(ratio, 2)} | ≤ 2.3: ${checkTarget('template-linear', fmtFigure(ratio, 2), ratio.median <= 2.3)} |`,
    '',
  ];
}
