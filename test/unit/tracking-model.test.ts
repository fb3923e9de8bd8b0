import { describe, expect, it } from 'vitest';
import { inIpv4Range, truncatedAddress } from '../../shared/tracking/model/client-address.ts';
import { hitCounters, hitEventOf } from '../../shared/tracking/model/hit-events.ts';
import { scanHtml, trackableLinks } from '../../shared/tracking/model/html-links.ts';
import { machineOpenReason } from '../../shared/tracking/model/machine-open.ts';
import { rewriteHtml } from '../../shared/tracking/model/rewrite.ts';
import { effectiveTracking } from '../../shared/tracking/model/settings.ts';
import {
  decodeClick,
  decodeOpen,
  encodeClick,
  encodeOpen,
} from '../../shared/tracking/model/token-payload.ts';
import type { HitItem } from '../../shared/tracking/store/hits.ts';

const unsubscribe = 'https://api.example/unsubscribe/';

describe('tracked links of an HTML part', () => {
  const html = [
    '<html><body>',
    '<a href="https://a.example/x?a=1&amp;b=2">A</a>',
    "<A HREF='http://b.example/'>B</A>",
    '<a href=https://c.example/>C</a>',
    '<a href="mailto:x@example.org">m</a><a href="tel:+1">t</a><a href="#top">#</a><a href="/relative">r</a>',
    '<a data-svc-track="off" href="https://private.example/">p</a>',
    '<a href="https://api.example/unsubscribe/tok">u</a>',
    '<area href=" https://d.example/map ">',
    '</body></html>',
  ].join('\n');

  it('numbers http(s) links in document order, decoded, and leaves the rest', () => {
    expect(trackableLinks(html, unsubscribe)).toEqual([
      'https://a.example/x?a=1&b=2',
      'http://b.example/',
      'https://c.example/',
      'https://d.example/map',
    ]);
  });

  it('decodes entities in the attributes it reads as a browser does, and nowhere else', () => {
    const encoded = [
      '<p title="&lt;a href=&quot;https://title.example/&quot;&gt;">&lt;a href="https://text.example/"&gt;</p>',
      "<a href='https://e.example/&quot;&#39;&#x41;&notanentity;'>1</a>",
      '<a href=https://f.example/&lt;x&amp>2</a>',
      '<a href="https://g.example/?a=1&ampb=2&copy">3</a>',
      '<a data-svc-track="o&#102;f" href="https://h.example/">4</a>',
      '<!-- <a href="https://comment.example/"> --><script>"<a href=\'https://script.example/\'>"</script>',
    ].join('');
    expect(trackableLinks(encoded, unsubscribe)).toEqual([
      'https://e.example/"\'A&notanentity;',
      'https://f.example/<x&',
      'https://g.example/?a=1&ampb=2©',
    ]);
  });

  it('rewrites only those links, removes the markers and puts the pixel before </body>', () => {
    const out = rewriteHtml(html, {
      excludedPrefix: unsubscribe,
      clickUrl: (index) => `https://api.example/t/c/T${index}`,
      openUrl: 'https://api.example/t/o/O',
    });
    expect(trackableLinks(out, unsubscribe).filter((url) => url.includes('/t/c/'))).toEqual(
      [0, 1, 2, 3].map((n) => `https://api.example/t/c/T${n}`),
    );
    expect(out).toContain('<a href="https://private.example/">p</a>');
    expect(out).toContain('<a href="https://api.example/unsubscribe/tok">u</a>');
    expect(out).toContain('<a href="mailto:x@example.org">m</a>');
    expect(out).not.toContain('data-svc-track');
    expect(out).toMatch(/<img src="https:\/\/api\.example\/t\/o\/O"[^>]*>\n?<\/body>/);
  });

  it('changes nothing when nothing is asked and nothing is marked', () => {
    const plain = '<p><a href="https://a.example/">A</a> &amp; <b>bold</b></p>';
    expect(rewriteHtml(plain, { excludedPrefix: unsubscribe })).toBe(plain);
  });

  it('puts the pixel at the end of a fragment', () => {
    expect(rewriteHtml('<p>Hi</p>', { excludedPrefix: unsubscribe, openUrl: 'https://x/t/o/O' })).toMatch(
      /^<p>Hi<\/p><img src="https:\/\/x\/t\/o\/O"/,
    );
  });

  it('scans hostile markup in one linear pass', () => {
    const hostile = `${'<a href="'.repeat(20_000)}${'<'.repeat(50_000)}`;
    const scan = scanHtml(hostile, unsubscribe);
    expect(scan.links.length).toBeLessThanOrEqual(1);
  });
});

describe('token payloads', () => {
  it('round-trip, and a payload of the other kind does not decode', () => {
    const uuid = '2a52b27c-0980-473f-96bc-aa7afca8d390';
    expect(decodeOpen(encodeOpen({ messageUuid: uuid, recipient: 3 }))).toEqual({
      messageUuid: uuid,
      recipient: 3,
    });
    expect(decodeClick(encodeClick({ messageUuid: uuid, recipient: 1, link: 99 }))).toEqual({
      messageUuid: uuid,
      recipient: 1,
      link: 99,
    });
    expect(decodeClick(encodeOpen({ messageUuid: uuid, recipient: 3 }))).toBeUndefined();
    expect(decodeOpen(encodeClick({ messageUuid: uuid, recipient: 1, link: 0 }))).toBeUndefined();
  });
});

describe('client addresses', () => {
  it('are truncated to /24 and /48', () => {
    expect(truncatedAddress('198.51.100.77')).toBe('198.51.100.0/24');
    expect(truncatedAddress('::ffff:198.51.100.77')).toBe('198.51.100.0/24');
    expect(truncatedAddress('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1::/48');
    expect(truncatedAddress('2001:db8::1')).toBe('2001:db8:0::/48');
    expect(truncatedAddress('not an address')).toBeUndefined();
    expect(inIpv4Range('17.58.1.2', '17.0.0.0', 8)).toBe(true);
    expect(inIpv4Range('18.0.0.1', '17.0.0.0', 8)).toBe(false);
  });
});

describe('machine opens', () => {
  const at = new Date('2026-11-28T12:00:30Z');
  const human = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Thunderbird/128.0';
  it('flags Apple Mail Privacy Protection, image proxies and prefetches on delivery', () => {
    expect(machineOpenReason({ address: '17.1.2.3', userAgent: human, at })).toBe('apple-privacy-proxy');
    expect(machineOpenReason({ address: '203.0.113.9', userAgent: 'Mozilla/5.0', at })).toBe(
      'apple-privacy-proxy',
    );
    expect(
      machineOpenReason({
        address: '66.249.84.1',
        userAgent:
          'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)',
        at,
      }),
    ).toBe('image-proxy');
    expect(
      machineOpenReason({ address: '203.0.113.9', userAgent: 'Java/17', sentAt: '2026-11-28T12:00:25Z', at }),
    ).toBe('prefetch');
  });
  it('leaves a person reading alone, even soon after delivery', () => {
    expect(
      machineOpenReason({ address: '203.0.113.9', userAgent: human, sentAt: '2026-11-28T12:00:25Z', at }),
    ).toBe(undefined);
    expect(
      machineOpenReason({ address: '203.0.113.9', userAgent: 'Java/17', sentAt: '2026-11-28T11:00:00Z', at }),
    ).toBe(undefined);
  });
});

describe('effective tracking', () => {
  const on = { opens: true, clicks: true };
  it('is off by default, follows the domain, and the message overrides field by field', () => {
    expect(effectiveTracking({ content_kind: 'html_only' })).toEqual({ opens: false, clicks: false });
    expect(effectiveTracking({ content_kind: 'mixed', domainDefault: on })).toEqual(on);
    expect(
      effectiveTracking({ content_kind: 'mixed', domainDefault: on, tracking: { clicks: false } }),
    ).toEqual({
      opens: true,
      clicks: false,
    });
  });
  it('gives authentication mail no domain default, and never tracks eml or text', () => {
    const tags = [{ name: 'category', value: 'authentication' }];
    expect(effectiveTracking({ content_kind: 'html_only', domainDefault: on, tags })).toEqual({
      opens: false,
      clicks: false,
    });
    expect(effectiveTracking({ content_kind: 'html_only', tags, tracking: { opens: true } }).opens).toBe(
      true,
    );
    expect(effectiveTracking({ content_kind: 'eml', tracking: on })).toEqual({ opens: false, clicks: false });
    expect(effectiveTracking({ content_kind: 'text_only', tracking: on })).toEqual({
      opens: false,
      clicks: false,
    });
  });
});

describe('hit events and counters', () => {
  const item = (hits: number, extra: Partial<HitItem> = {}): HitItem => ({
    message_uuid: '2a52b27c-0980-473f-96bc-aa7afca8d390',
    account_id: 'acct',
    kind: 'open',
    recipient: 'ada@example.org',
    recipient_index: 0,
    tenant: 'example.test',
    status: 'delivered',
    subject: 'Hi',
    tags: [],
    metadata: {},
    hits,
    first_at: '2026-11-28T12:00:00.000Z',
    last: {
      at: `2026-11-28T12:00:0${hits}.000Z`,
      user_agent: 'UA',
      client_address: '192.0.2.0/24',
      machine_open: true,
    },
    ...extra,
  });
  it('first is the first hit of the record; ids differ per hit and repeat per record', () => {
    const first = hitEventOf(undefined, item(1));
    const again = hitEventOf(item(1), item(2));
    expect(first.type).toBe('message.opened');
    expect(first.extra?.first).toBe(true);
    expect(again.extra?.first).toBe(false);
    expect(again.id).not.toBe(first.id);
    expect(hitEventOf(undefined, item(1)).id).toBe(first.id);
  });
  it('counts opened once per recipient and human_opened at the first human open', () => {
    expect(hitCounters(undefined, item(1))).toEqual(['opened']);
    expect(hitCounters(item(1), item(2, { human_first_at: '2026-11-28T12:00:02.000Z' }))).toEqual([
      'human_opened',
    ]);
    expect(hitCounters(item(2, { human_first_at: 'x' }), item(3, { human_first_at: 'x' }))).toEqual([]);
    expect(hitCounters(undefined, item(1, { kind: 'click' }))).toEqual(['clicked']);
  });
});
