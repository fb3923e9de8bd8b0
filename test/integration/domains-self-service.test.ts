import assert from 'node:assert/strict';
import { describe, it, vi } from 'vitest';
import { checkDomain } from '../../shared/domains/check.ts';
import { domainQueryResponse, domainResponse } from '../../shared/domains/schemas.ts';
import { dueDomains } from '../../shared/domains/store/domain-checks.ts';
import { getDomain } from '../../shared/domains/store/domains.ts';
import { publishRecords, removeName } from '../support/dns.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/**
 * Self-service domains against the test run's real DNS server: add, publish, verify, send, the
 * record errors with what DNS answered, claims and delete (docs/domains.md).
 */
interface Who {
  account: string;
  token: string;
}

async function someone(): Promise<Who> {
  const account = uniqueAccount('dom');
  return { account, token: await mintToken({ account }) };
}

const post = (who: Who, path: string, body: unknown) => call('POST', path, { token: who.token, body });

async function add(who: Who, domain: string, extra: Record<string, unknown> = {}) {
  const response = await post(who, '/domain/add-1.0', { domain, ...extra });
  assert.equal(response.status, 200, response.text);
  assert.ok(domainResponse.safeParse(response.body.data).success, response.text);
  return response.body.data.domain;
}

type RecordView = { purpose: string; type: string; name: string; value: string; status: string; error?: any };

/** Publishes every record of the view as the user would, at the test DNS server. */
function publishAll(
  records: RecordView[],
  change: (record: RecordView) => string = (record) => record.value,
) {
  const byName = new Map<string, { txt: string[][]; mx: Array<{ priority: number; exchange: string }> }>();
  for (const record of records) {
    const entry = byName.get(record.name) ?? { txt: [], mx: [] };
    const value = change(record);
    if (record.type === 'MX') entry.mx.push({ priority: 10, exchange: value });
    else entry.txt.push(value.match(/.{1,255}/g) ?? ['']);
    byName.set(record.name, entry);
  }
  for (const [name, entry] of byName) publishRecords(name, entry);
}

const message = (domain: string, extra: Record<string, unknown> = {}) => ({
  message_sender: `app@${domain}`,
  to: 'someone@example.net',
  subject: 'Hello',
  content: { kind: 'text_only', text: 'Hi' },
  ...extra,
});

describe('self-service domains', () => {
  it('add → pending with every record; unsent until verified; publish → verified → delivered', async () => {
    const who = await someone();
    const domain = uniqueDomain('self');
    const view = await add(who, domain);
    assert.equal(view.status, 'pending');
    assert.equal(view.sending_ready, false);
    assert.deepEqual(
      view.records.map((record: RecordView) => record.purpose),
      ['dkim', 'mail_from_mx', 'mail_from_spf', 'dmarc'],
    );
    assert.equal(view.records.find((record: RecordView) => record.purpose === 'dmarc').required, false);

    const refused = await post(who, '/message/add-1.0', message(domain));
    assert.equal(refused.status, 406, refused.text);
    assert.equal(refused.body.error.code, 111);
    assert.match(refused.body.error.details[0].message, new RegExp(`${domain}.*not sending_ready`));

    publishAll(view.records);
    const verified = await post(who, '/domain/verify-1.0', { domain });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.data.domain.status, 'verified', verified.text);
    assert.equal(verified.body.data.domain.sending_ready, true);
    assert.ok(verified.body.data.domain.records.every((record: RecordView) => record.status === 'verified'));

    const again = await post(who, '/domain/verify-1.0', { domain });
    assert.equal(again.status, 429);
    assert.equal(again.body.error.code, 115);
    assert.ok(Number(again.headers.get('retry-after')) >= 1);

    const sent = await post(who, '/message/add-1.0', message(domain));
    assert.equal(sent.status, 200, sent.text);
    const uuid = sent.body.data.message_uuid;
    await vi.waitFor(
      async () => {
        const found = await post(who, '/message/query-1.0', { message_uuid: uuid });
        assert.equal(found.body.data.status, 'delivered', found.text);
      },
      { timeout: 30_000, interval: 250 },
    );

    const listed = await post(who, '/domain/query-1.0', {});
    assert.ok(domainQueryResponse.safeParse(listed.body.data).success, listed.text);
    assert.deepEqual(
      listed.body.data.domains.map((entry: { domain: string }) => entry.domain),
      [domain],
    );
  });

  it('shows what DNS answered: a wrong value, two SPF records, a missing name', async () => {
    const who = await someone();
    const domain = uniqueDomain('wrong');
    const view = await add(who, domain);
    publishAll(view.records, (record) =>
      record.purpose === 'dkim' ? 'v=DKIM1; k=rsa; p=MIIBtypo' : record.value,
    );
    const spf = view.records.find((record: RecordView) => record.purpose === 'mail_from_spf');
    publishRecords(spf.name, {
      txt: [[spf.value], ['v=spf1 mx ~all']],
      mx: [
        { priority: 10, exchange: view.records.find((r: RecordView) => r.purpose === 'mail_from_mx').value },
      ],
    });
    const checked = (await post(who, '/domain/verify-1.0', { domain })).body.data.domain;
    const byPurpose = Object.fromEntries(
      checked.records.map((record: RecordView) => [record.purpose, record]),
    );
    assert.equal(byPurpose.dkim.error.code, 'INVALID_VALUE');
    assert.deepEqual(byPurpose.dkim.error.observed, ['v=DKIM1; k=rsa; p=MIIBtypo']);
    assert.equal(byPurpose.mail_from_spf.error.code, 'MULTIPLE_RECORDS');
    assert.equal(byPurpose.mail_from_spf.error.observed.length, 2);
    assert.equal(byPurpose.mail_from_mx.status, 'verified');
    assert.equal(checked.status, 'partially_verified');
    assert.equal(checked.sending_ready, false);

    const other = uniqueDomain('bare');
    await add(who, other);
    const bare = (await post(who, '/domain/verify-1.0', { domain: other })).body.data.domain;
    assert.equal(bare.records[0].error.code, 'HOST_NOT_FOUND');
  });

  it('refuses bad names with 107 and details, and hides other accounts’ domains (112)', async () => {
    const who = await someone();
    for (const name of [
      '192.0.2.1',
      'localhost',
      'example.com.',
      `${'a'.repeat(250)}.com`,
      'bücher.example',
      '-a.example',
    ]) {
      const response = await post(who, '/domain/add-1.0', { domain: name });
      assert.equal(response.status, 406, `${name}: ${response.text}`);
      assert.equal(response.body.error.code, 107);
      assert.equal(response.body.error.details[0].field, 'domain');
    }
    const holder = await someone();
    const domain = uniqueDomain('hidden');
    await add(holder, domain);
    for (const path of [
      '/domain/query-1.0',
      '/domain/verify-1.0',
      '/domain/update-1.0',
      '/domain/delete-1.0',
    ]) {
      const response = await post(who, path, { domain });
      assert.equal(response.status, 404, `${path}: ${response.text}`);
      assert.equal(response.body.error.code, 112);
    }
  });

  it('moves a domain only on the claimant’s DNS proof; the holder’s unsent mail ends failed', async () => {
    const holder = await someone();
    const claimant = await someone();
    const domain = uniqueDomain('claim');
    const view = await add(holder, domain);
    publishAll(view.records);
    assert.equal((await post(holder, '/domain/verify-1.0', { domain })).body.data.domain.sending_ready, true);
    const held = await post(
      holder,
      '/message/add-1.0',
      message(domain, { scheduling: { mode: 'manual-wait' } }),
    );
    assert.equal(held.status, 200, held.text);

    const claim = await add(claimant, domain);
    assert.equal(claim.claim, true);
    assert.equal(claim.records.length, 1);
    assert.equal(claim.records[0].purpose, 'dkim');
    assert.notEqual(claim.records[0].name, view.records[0].name, 'the claimant’s own selector');

    const unproven = await post(claimant, '/domain/verify-1.0', { domain });
    assert.equal(unproven.body.data.domain.claim, true, unproven.text);
    assert.equal((await post(holder, '/domain/query-1.0', { domain })).status, 200, 'nothing moved');

    publishAll([...view.records.filter((record: RecordView) => record.purpose !== 'dkim'), claim.records[0]]);
    await vi.waitFor(
      async () => {
        const proven = await post(claimant, '/domain/verify-1.0', { domain });
        assert.equal(proven.status, 200, proven.text);
        assert.equal(proven.body.data.domain.claim, undefined, proven.text);
      },
      { timeout: 30_000, interval: 2_000 },
    );
    assert.equal((await post(holder, '/domain/query-1.0', { domain })).status, 404);
    const failed = await post(holder, '/message/query-1.0', { message_uuid: held.body.data.message_uuid });
    assert.equal(failed.body.data.status, 'failed', failed.text);
    assert.match(JSON.stringify(failed.body.data), /domain moved to another account/);
  });

  it('deletes with unsent mail only when asked to cancel it', async () => {
    const who = await someone();
    const domain = uniqueDomain('gone');
    const view = await add(who, domain);
    publishAll(view.records);
    await post(who, '/domain/verify-1.0', { domain });
    const held = await post(
      who,
      '/message/add-1.0',
      message(domain, { scheduling: { mode: 'manual-wait' } }),
    );
    assert.equal(held.status, 200, held.text);
    const refused = await post(who, '/domain/delete-1.0', { domain });
    assert.equal(refused.status, 406, refused.text);
    assert.equal(refused.body.error.code, 111);
    assert.match(refused.body.error.message, /1 message/);
    const deleted = await post(who, '/domain/delete-1.0', { domain, cancel_unsent: true });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual(deleted.body.data, { domain, deleted: true, cancelled: 1 });
    const cancelled = await post(who, '/message/query-1.0', { message_uuid: held.body.data.message_uuid });
    assert.equal(cancelled.body.data.status, 'cancelled');
    assert.equal((await post(who, '/domain/query-1.0', { domain })).status, 404);
  });

  it('switches receiving and tracking', async () => {
    const who = await someone();
    const domain = uniqueDomain('switch');
    await add(who, domain);
    const updated = await post(who, '/domain/update-1.0', {
      domain,
      receiving: true,
      tracking: { opens: true, clicks: false },
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.data.domain.receiving, true);
    assert.deepEqual(updated.body.data.domain.tracking, { opens: true, clicks: false });
    assert.ok(
      updated.body.data.domain.records.some((record: RecordView) => record.purpose === 'receiving_mx'),
    );
  });

  it('background: due after 5 minutes; a lost record is temporary_failure, then failed after the grace', async () => {
    const who = await someone();
    const domain = uniqueDomain('bg');
    const view = await add(who, domain);
    const created = Date.parse((await getDomain(domain))?.createdAt ?? '');
    const dueAt = (ms: number) => new Date(created + ms);
    assert.ok(!(await dueDomains(dueAt(60_000), 1_000)).domains.includes(domain), 'not due after a minute');
    assert.ok((await dueDomains(dueAt(5 * 60_000), 1_000)).domains.includes(domain), 'due after 5 minutes');

    publishAll(view.records);
    const hour = 3_600_000;
    const verified = await checkDomain((await getDomain(domain)) as never, dueAt(6 * 60_000));
    assert.equal(verified?.status, 'verified');
    assert.equal(verified?.nextCheckAt, dueAt(6 * 60_000 + 24 * hour).toISOString());

    removeName(view.records[0].name);
    const lost = await checkDomain(verified as never, dueAt(25 * hour));
    assert.equal(lost?.status, 'temporary_failure');
    assert.equal(lost?.sendingReady, true);
    assert.equal(lost?.records?.dkim?.error?.code, 'HOST_NOT_FOUND');
    const failed = await checkDomain(lost as never, dueAt(25 * hour + 72 * hour));
    assert.equal(failed?.status, 'failed');
    assert.equal(failed?.sendingReady, false);
    const refused = await post(who, '/message/add-1.0', message(domain));
    assert.equal(refused.body.error?.code, 111, refused.text);
  });
});
