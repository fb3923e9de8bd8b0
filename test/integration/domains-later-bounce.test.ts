import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { addMessage, outboxEnvelope, waitForStatus } from '../support/delivery.ts';
import { publishDomainRecords } from '../support/dns.ts';
import { call, mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { sendInbound } from '../support/inbound.ts';
import { newAccount, textMessage } from '../support/messages.ts';
import { waitForSuppression } from '../support/suppressions.ts';
import { useWebhookEndpoints } from '../support/webhook-endpoints.ts';

useHostEnvironment();
const endpoints = useWebhookEndpoints('dsn');

/**
 * A bounce that comes later (docs/domains.md, "MAIL FROM"): the receiving server first accepted the
 * message, then mails a delivery status notification to its return path, `<uuid>@<the domain's MAIL
 * FROM domain>`. On AWS that host's MX is SES's feedback endpoint; the local host's inbound MX
 * stands in for it and knows the return paths from the table, so a self-service domain's own MAIL
 * FROM domain is one as soon as the domain is added.
 */
type RecordView = { purpose: string; type: string; name: string; value: string };

/** A DSN as Postfix writes one: multipart/report with the delivery-status part and the headers. */
function deliveryStatusNotification(returnPath: string, recipient: string, messageUuid: string): string {
  return [
    'From: MAILER-DAEMON@mx.example.net (Mail Delivery System)',
    `To: ${returnPath}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: <${randomUUID()}@mx.example.net>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"',
    '',
    '--dsn-boundary',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'Your message could not be delivered: the mailbox was removed after it arrived.',
    '',
    '--dsn-boundary',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.net',
    'Arrival-Date: Sat, 28 Nov 2026 18:00:00 +0000',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Original-Recipient: rfc822; ${recipient}`,
    'Action: failed',
    'Status: 5.1.1',
    'Diagnostic-Code: smtp; 550 5.1.1 <later@example.net>: mailbox removed',
    '',
    '--dsn-boundary',
    'Content-Type: text/rfc822-headers',
    '',
    `Message-ID: <${messageUuid}@example>`,
    '',
    '--dsn-boundary--',
    '',
  ].join('\r\n');
}

describe('a later bounce to a self-service domain’s own return path', () => {
  it('a DSN mailed to <uuid>@<mail_from> over SMTP bounces the recipient, suppresses it, fires the webhook', async () => {
    const account = uniqueAccount('dsn');
    const who = { account, token: await mintToken({ account }) };
    const hook = await endpoints.add(who, { events: ['message.bounced'] });
    const post = (path: string, body: unknown) => call('POST', path, { token: who.token, body });
    const domain = uniqueDomain('dsn');
    const added = await post('/domain/add-1.0', { domain, mail_from_subdomain: 'returns' });
    assert.equal(added.status, 200, added.text);
    publishDomainRecords(added.body.data.domain.records as RecordView[]);
    const verified = await post('/domain/verify-1.0', { domain });
    assert.equal(verified.body.data.domain.sending_ready, true, verified.text);

    const recipient = 'later@example.net';
    const sent = await post('/message/add-1.0', {
      message_sender: `app@${domain}`,
      to: [recipient],
      subject: 'Accepted first',
      content: { kind: 'text_only', text: 'Hi' },
    });
    assert.equal(sent.status, 200, sent.text);
    const uuid: string = sent.body.data.message_uuid;
    await waitForStatus(who.token, uuid, ['delivered']);
    const returnPath = outboxEnvelope(uuid)?.mail_from;
    assert.equal(returnPath, `${uuid}@returns.${domain}`);

    const outcome = await sendInbound({
      envelope: { from: '', to: [returnPath] },
      raw: deliveryStatusNotification(returnPath, recipient, uuid),
    });
    assert.equal(outcome.ok, true, outcome.response);

    const message = await waitForStatus(who.token, uuid, ['bounced']);
    const [entry] = message.recipients;
    assert.equal(entry.status, 'bounced');
    assert.match(entry.detail, /^Permanent\/General: smtp; 550 5\.1\.1/);
    const suppression = await waitForSuppression(who, recipient);
    assert.equal(suppression.reason, 'hard_bounce');
    await endpoints.receiver.waitFor(() => endpoints.on(hook).length >= 1);
    const [delivery] = endpoints.on(hook);
    const body = JSON.parse(delivery?.body ?? '{}');
    assert.equal(body.type, 'message.bounced');
    assert.equal(body.data.message_uuid, uuid);
    assert.equal(body.data.recipient.email, recipient);
  });

  it('an operator’s domain: its return path is bounce.<domain>, matched the same way', async () => {
    const who = await newAccount('dsnop');
    const recipient = 'moved@example.net';
    const { uuid } = await addMessage(who.token, textMessage(who, { to: [recipient] }));
    await waitForStatus(who.token, uuid, ['delivered']);
    const returnPath = outboxEnvelope(uuid)?.mail_from;
    assert.equal(returnPath, `${uuid}@bounce.${who.domain}`);
    const outcome = await sendInbound({
      envelope: { from: '', to: [returnPath] },
      raw: deliveryStatusNotification(returnPath, recipient, uuid),
    });
    assert.equal(outcome.ok, true, outcome.response);
    const message = await waitForStatus(who.token, uuid, ['bounced']);
    assert.equal(message.recipients[0].status, 'bounced');
  });

  it('mail to a return path of no registered domain is refused at RCPT', async () => {
    const outcome = await sendInbound({
      envelope: { from: '', to: [`${randomUUID()}@returns.${uniqueDomain('nobody')}`] },
      raw: 'Subject: nothing\r\n\r\nnothing\r\n',
    });
    assert.equal(outcome.ok, false);
    assert.match(outcome.response, /^550/);
  });
});
