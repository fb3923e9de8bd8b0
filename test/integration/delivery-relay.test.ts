import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { putTestMessage, smtpTransactions } from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

test('through a relay that is not the final hop, accepted means sent; delivery comes from events', async () => {
  // This process's sender treats the local MTA as a relay (SMTP_FINAL_HOP=false).
  process.env.SMTP_FINAL_HOP = 'false';
  const { sendQueuedMessage } = await import('../../shared/delivery/send-message.ts');
  const { handler: deliveryEvents } = await import('../../functions/delivery-events/handler.ts');
  const account = uniqueAccount('relay');
  const domain = uniqueDomain('relay');
  await registerDomain(domain, account);
  const uuid = await putTestMessage({
    account,
    domain,
    to: ['recipient@example.com', 'bounce@example.com'],
  });

  assert.deepEqual(await sendQueuedMessage(uuid), { result: 'done', status: 'sent' });
  let message = await getDeliveryMessage(uuid);
  assert.equal(message?.status, 'sent');
  assert.equal(message?.relay?.message_id, uuid, 'the relay named its queue id');
  assert.match(message?.relay?.response ?? '', /^250 /);
  // The relay refused the bounce address at RCPT; the other one waits for its delivery event.
  assert.deepEqual(
    message?.recipients.map((recipient) => recipient.status),
    ['pending', 'bounced'],
  );
  assert.equal(smtpTransactions(uuid).length, 1);

  const event = JSON.parse(
    readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', 'delivered.json'), 'utf8'),
  );
  event.detail.mail.tags.message_uuid = [uuid];
  assert.deepEqual(await deliveryEvents(event), { result: 'recorded' });
  message = await getDeliveryMessage(uuid);
  assert.equal(message?.recipients[0]?.status, 'delivered');
  assert.equal(message?.status, 'bounced', 'none pending, one bounced');
});
