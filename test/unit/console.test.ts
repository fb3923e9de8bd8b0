import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { consoleContentSecurityPolicy } from '../../console/src/config-contract.ts';
import { parseCsv, toCsv } from '../../console/src/csv.ts';
import {
  chartInstant,
  chartTick,
  displayDate,
  fromLocalInput,
  toLocalInput,
} from '../../console/src/format.ts';
import { href, parseHash } from '../../console/src/hash-route.ts';
import { hasRemoteImages, previewDocument, previewPolicy } from '../../console/src/preview-document.ts';
import {
  bounceRate,
  complaintRate,
  guardLevels,
  percent,
  rateLevel,
  seriesTotals,
} from '../../console/src/stats.ts';

/*
 * The console's pure helpers: CSV out and in, dates for inputs and display, hash routes, its CSP,
 * the Dashboard's rates and levels.
 */
describe('console CSV', () => {
  it('quotes what needs quoting and defuses cells a spreadsheet would run as formulas', () => {
    const csv = toCsv(
      ['a', 'b'],
      [
        ['plain', 'with, comma'],
        ['say "hi"', 'line\nbreak'],
        ['=SUM(A1)', '+1'],
        ['-2', '@cmd'],
        [3, null],
      ],
    );
    assert.equal(
      csv,
      'a,b\r\nplain,"with, comma"\r\n"say ""hi""","line\nbreak"\r\n\'=SUM(A1),\'+1\r\n\'-2,\'@cmd\r\n3,\r\n',
    );
  });

  it('reads what spreadsheets save: quotes, CRLF or LF, semicolons, a byte-order mark, blank lines', () => {
    assert.deepEqual(parseCsv('\uFEFFemail,note\r\n"Doe, J <j@x.test>",a\n\nk@x.test;b\r\n"say ""x""",c'), [
      ['email', 'note'],
      ['Doe, J <j@x.test>', 'a'],
      ['k@x.test', 'b'],
      ['say "x"', 'c'],
    ]);
    assert.deepEqual(parseCsv('only@x.test'), [['only@x.test']]);
    assert.deepEqual(parseCsv(''), []);
  });

  it('reads back what it writes', () => {
    const rows = [['x, y', 'multi\r\nline', 'quote " here']];
    assert.deepEqual(parseCsv(toCsv(['h1', 'h2', 'h3'], rows)).slice(1), rows);
  });
});

describe('console dates', () => {
  it('turns a datetime-local value into ISO 8601 with the browser’s offset, and back', () => {
    const iso = fromLocalInput('2026-03-29T01:30') as string;
    assert.match(iso, /^2026-03-29T01:30:00[+-]\d{2}:\d{2}$/);
    assert.equal(new Date(iso).getTime(), new Date('2026-03-29T01:30').getTime());
    assert.equal(toLocalInput(iso), '2026-03-29T01:30');
    assert.equal(fromLocalInput(''), undefined);
    assert.equal(fromLocalInput('not a date'), undefined);
    assert.equal(toLocalInput('nonsense'), '');
  });

  it('shows the API’s dates without milliseconds, with their offset', () => {
    assert.equal(displayDate('2026-11-22T09:15:00.123+01:00'), '2026-11-22 09:15:00 +01:00');
    assert.equal(displayDate('2026-11-22T09:15:00Z'), '2026-11-22 09:15:00 +00:00');
    assert.equal(displayDate(null), '—');
    assert.equal(displayDate('yesterday'), 'yesterday');
  });

  it('dates the charts in the same ISO style (the browser’s time zone), never month/day', () => {
    const nine = new Date(2026, 10, 28, 9, 0).getTime() / 1000;
    const midnight = new Date(2026, 10, 28, 0, 0).getTime() / 1000;
    assert.equal(chartInstant(nine), '2026-11-28 09:00');
    assert.equal(chartTick(midnight), '2026-11-28');
    assert.equal(chartTick(nine), '09:00');
  });
});

describe('console routes', () => {
  it('parses and builds hash routes with an id and a query', () => {
    const route = parseHash('#/message/0b6f?x=1&y=a%20b');
    assert.equal(route.page, 'message');
    assert.equal(route.id, '0b6f');
    assert.equal(route.query.get('y'), 'a b');
    assert.equal(parseHash('').page, 'activity');
    assert.equal(parseHash('#/webhooks').id, undefined);
    assert.equal(
      href('activity', undefined, { status: 'waiting,queued', from: undefined, to: '' }),
      '#/activity?status=waiting%2Cqueued',
    );
    assert.equal(href('webhooks', 'wh_1/2'), '#/webhooks/wh_1%2F2');
    assert.equal(parseHash(href('webhooks', 'wh_1/2')).id, 'wh_1/2');
  });
});

describe('console Content-Security-Policy', () => {
  it('allows scripts only from its own origin and connections only to the API and the issuer', () => {
    const policy = consoleContentSecurityPolicy({
      connect: ['https://api.example.com', 'https://id.example.com', 'https://api.example.com'],
      allowHttpImages: false,
    });
    const directives = new Map(
      policy.split('; ').map((directive) => {
        const [name, ...values] = directive.split(' ');
        return [name, values.join(' ')];
      }),
    );
    assert.equal(directives.get('script-src'), "'self'");
    assert.equal(directives.get('connect-src'), "'self' https://api.example.com https://id.example.com");
    assert.equal(directives.get('img-src'), "'self' data: https:");
    assert.equal(directives.get('frame-ancestors'), "'none'");
    assert.doesNotMatch(policy, /unsafe-eval/);
    assert.doesNotMatch(directives.get('script-src') as string, /unsafe-inline/);
    assert.match(
      consoleContentSecurityPolicy({ connect: [], allowHttpImages: true }),
      /img-src 'self' data: https: http:;/,
    );
  });
});

describe('console preview document', () => {
  it('puts its own policy first in the head: no script, no remote image until asked', () => {
    const document = previewDocument('<p>Hi</p><script>alert(1)</script>', false);
    assert.ok(
      document.startsWith(
        `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${previewPolicy(false)}">`,
      ),
    );
    assert.ok(document.endsWith('<body><p>Hi</p><script>alert(1)</script></body></html>'));
    assert.match(
      previewPolicy(false),
      /^default-src 'none'; style-src 'unsafe-inline'; img-src data: cid:; /,
    );
    assert.doesNotMatch(previewPolicy(false), /script-src|https:/);
    assert.match(previewPolicy(true), /img-src data: cid: https: http:;/);
  });

  it('notices remote images and styles, and nothing else', () => {
    assert.ok(hasRemoteImages('<img src="https://x.test/a.png">'));
    assert.ok(hasRemoteImages("<img SRC='//x.test/a.png'>"));
    assert.ok(hasRemoteImages('<td background="http://x.test/b.gif">'));
    assert.ok(hasRemoteImages('<div style="background: url( \'https://x.test/c.png\')">'));
    assert.ok(!hasRemoteImages('<img src="data:image/png;base64,AAAA"><img src="cid:logo">'));
    assert.ok(!hasRemoteImages('<a href="https://x.test">a link is not an image</a>'));
  });
});

describe('console dashboard figures', () => {
  const point = (at: string, counts: Partial<Record<string, number>>) => ({
    at,
    accepted: 0,
    sent: 0,
    delivered: 0,
    bounced: 0,
    complained: 0,
    suppressed: 0,
    failed: 0,
    unsubscribed: 0,
    opened: 0,
    clicked: 0,
    human_opened: 0,
    ...counts,
  });

  it('computes the rates as the statistics route does, 0 when nothing was sent or delivered', () => {
    assert.equal(bounceRate({ bounced: 1, sent: 4 }), 0.25);
    assert.equal(bounceRate({ bounced: 1, sent: 0 }), 0);
    assert.equal(complaintRate({ complained: 1, delivered: 500 }), 0.002);
    assert.equal(complaintRate({ complained: 0, delivered: 0 }), 0);
  });

  it("places a rate against SES's review and pause levels, at or above each", () => {
    assert.equal(rateLevel(0.049, guardLevels.bounce), 'ok');
    assert.equal(rateLevel(0.05, guardLevels.bounce), 'review');
    assert.equal(rateLevel(0.1, guardLevels.bounce), 'pause');
    assert.equal(rateLevel(0.001, guardLevels.complaint), 'review');
    assert.equal(rateLevel(0.0049, guardLevels.complaint), 'review');
    assert.equal(rateLevel(0.005, guardLevels.complaint), 'pause');
  });

  it('adds up a series and writes percentages for people', () => {
    const totals = seriesTotals({
      key: 'example.test',
      points: [
        point('a', { accepted: 2, sent: 3, delivered: 2, bounced: 1 }),
        point('b', { sent: 1, failed: 1 }),
      ],
    });
    assert.deepEqual(totals, {
      accepted: 2,
      sent: 4,
      delivered: 2,
      bounced: 1,
      complained: 0,
      suppressed: 0,
      failed: 1,
      unsubscribed: 0,
      opened: 0,
      human_opened: 0,
      clicked: 0,
    });
    assert.equal(percent(0), '0 %');
    assert.equal(percent(1 / 3), '33.3 %');
    assert.equal(percent(0.001), '0.10 %');
  });
});
