import assert from 'node:assert/strict';
import { test } from 'node:test';
import { enqueueSend } from '../../shared/repositories/message-delivery.ts';
import { registerDomain } from '../../shared/services/domain-registry.ts';
import {
  isSettled,
  outboxEml,
  putTestMessage,
  smtpTransactions,
  waitForMessage,
} from '../support/delivery.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';

useHostEnvironment();

test('a queued message goes through the queue, the sender and the local MTA to delivered', async () => {
  const account = uniqueAccount();
  const domain = uniqueDomain();
  await registerDomain(domain, account);
  const uuid = await putTestMessage({
    account,
    domain,
    to: ['alice@example.net'],
    cc: ['carol@example.net'],
    bcc: ['hidden@example.net'],
    kind: 'mixed',
    attachments: [{ filename: 'report.txt', content_type: 'text/plain', content: Buffer.from('numbers') }],
  });
  await enqueueSend(uuid);
  const message = await waitForMessage(uuid, isSettled);
  assert.equal(message.status, 'delivered');
  assert.deepEqual(
    message.recipients.map((recipient) => recipient.status),
    ['delivered', 'delivered', 'delivered'],
  );
  const eml = outboxEml(uuid)?.toString('utf8') ?? '';
  assert.match(eml, new RegExp(`Message-ID: <${uuid}@${domain.replace('.', '\\.')}>`));
  assert.doesNotMatch(eml, /hidden@example\.net/);
  assert.equal(smtpTransactions(uuid).length, 1);
  assert.deepEqual(smtpTransactions(uuid)[0]?.recipients.sort(), [
    'alice@example.net',
    'carol@example.net',
    'hidden@example.net',
  ]);
});
