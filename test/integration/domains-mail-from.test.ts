import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { outboxEml, outboxEnvelope, verifyDkim, waitForStatus } from '../support/delivery.ts';
import { publishDomainRecords } from '../support/dns.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

/**
 * A domain's own `mail_from_subdomain` is its envelope sender over real SMTP (docs/domains.md):
 * `<message_uuid>@<subdomain>.<domain>`, and a bounce of that transaction lands on its message.
 */
type RecordView = { purpose: string; type: string; name: string; value: string };

describe('per-domain MAIL FROM', () => {
  it('mail of a domain with mail_from_subdomain "mail" leaves as <uuid>@mail.<domain>', async () => {
    const token = await mintToken({ account: uniqueAccount('mfrom') });
    const post = (path: string, body: unknown) => call('POST', path, { token, body });
    const domain = uniqueDomain('mfrom');
    const added = await post('/domain/add-1.0', { domain, mail_from_subdomain: 'mail' });
    assert.equal(added.status, 200, added.text);
    const view = added.body.data.domain;
    assert.equal(view.mail_from, `mail.${domain}`);
    const mx = view.records.find((record: RecordView) => record.purpose === 'mail_from_mx');
    assert.equal(mx.name, `mail.${domain}`);
    publishDomainRecords(view.records);
    const verified = await post('/domain/verify-1.0', { domain });
    assert.equal(verified.body.data.domain.sending_ready, true, verified.text);

    const sent = await post('/message/add-1.0', {
      message_sender: `app@${domain}`,
      to: ['bounce-me@example.net', 'reader@example.net'],
      subject: 'Own MAIL FROM',
      content: { kind: 'text_only', text: 'Hi' },
    });
    assert.equal(sent.status, 200, sent.text);
    const uuid: string = sent.body.data.message_uuid;
    const message = await waitForStatus(token, uuid, ['delivered', 'bounced', 'failed']);

    const envelope = outboxEnvelope(uuid);
    assert.equal(envelope?.mail_from, `${uuid}@mail.${domain}`);
    const eml = outboxEml(uuid);
    assert.ok(eml !== undefined);
    assert.equal((await verifyDkim(eml))[0]?.result, 'pass');

    // The refusal of that transaction is recorded on its message.
    assert.equal(message.status, 'bounced');
    const byEmail = Object.fromEntries(
      message.recipients.map((recipient: { email: string }) => [recipient.email, recipient]),
    );
    assert.equal(byEmail['bounce-me@example.net'].status, 'bounced');
    assert.match(byEmail['bounce-me@example.net'].detail, /^550 5\.1\.1/);
    assert.equal(byEmail['reader@example.net'].status, 'delivered');
  });
});
