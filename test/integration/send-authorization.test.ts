import assert from 'node:assert/strict';
import { describe, it, vi } from 'vitest';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { getActiveSigningKeys } from '../../shared/domains/dkim/signing-keys.ts';
import { registerDomain, unregisterDomain } from '../../shared/domains/registry.ts';
import { putDomain } from '../../shared/domains/store/domains.ts';
import { setAccountActive } from '../../shared/platform/auth/account-store.ts';
import {
  addMessage,
  outboxEml,
  putTestMessage,
  runDispatcher,
  smtpTransactions,
  waitForMessage,
} from '../support/delivery.ts';
import { mintToken, uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';

/**
 * Authorization at send time: the account's status and the sending domain's owner are checked again
 * when the message leaves, not only when it was accepted. A message that no longer qualifies ends
 * `failed` with the reason; it is never sent unsigned and never signed with another account's key.
 * Through the host's sender (held or scheduled mail released later), plus the signing step's own
 * check for a domain that moves between the sender's cached check and the signature.
 */
useHostEnvironment();

const isFinal = (message: { status: string }) =>
  ['sent', 'delivered', 'bounced', 'failed', 'suppressed'].includes(message.status);

/** A message scheduled `seconds` from now (held until then, as manual-wait mail would be). */
async function scheduled(who: TestAccount, seconds: number) {
  const sendAt = new Date(Date.now() + seconds * 1000);
  const { uuid } = await addMessage(who.token, {
    message_sender: who.sender,
    to: ['reader@example.net'],
    subject: 'Scheduled',
    content: { kind: 'text_only', text: 'Later' },
    scheduling: { mode: 'scheduled', send_at: sendAt.toISOString().replace('Z', '+00:00') },
  });
  return { uuid, sendAt };
}

/** Runs the dispatcher (a minute apart locally) as its timer would, until the message is final. */
async function dispatchUntilFinal(uuid: string, sendAt: Date) {
  return vi.waitFor(
    async () => {
      if (Date.now() >= sendAt.getTime()) await runDispatcher();
      const message = await getDeliveryMessage(uuid);
      if (message === undefined || !isFinal(message))
        throw new Error(`message ${uuid} is ${message?.status}, not final`);
      return message;
    },
    { timeout: 100_000, interval: 1_000 },
  );
}

describe('authorization at send time', () => {
  it('a disabled account’s scheduled message ends failed and nothing is sent', async () => {
    const who = await newAccount('sendauth');
    // Due after the 30-second account-status cache that this request's authentication just filled.
    const { uuid, sendAt } = await scheduled(who, 33);
    await setAccountActive(who.account, false);
    const message = await dispatchUntilFinal(uuid, sendAt);
    assert.equal(message?.status, 'failed', JSON.stringify(message?.history));
    assert.match(message?.history.at(-1)?.detail ?? '', /account was disabled/);
    assert.equal(message?.recipients[0]?.status, 'failed');
    assert.deepEqual(smtpTransactions(uuid), [], 'no SMTP transaction');
  });

  it('a removed domain’s scheduled message ends failed; it is never sent unsigned', async () => {
    const who = await newAccount('sendauth');
    const { uuid, sendAt } = await scheduled(who, 3);
    assert.equal(await unregisterDomain(who.domain), true);
    const message = await dispatchUntilFinal(uuid, sendAt);
    assert.equal(message?.status, 'failed');
    assert.match(message?.history.at(-1)?.detail ?? '', /was removed from the platform/);
    assert.deepEqual(smtpTransactions(uuid), []);
    assert.equal(outboxEml(uuid), undefined);
  });

  it('after a domain moves to another account, the old account’s pending mail fails; the new owner signs its own', async () => {
    const before = await newAccount('sendauth');
    const { uuid, sendAt } = await scheduled(before, 3);
    const newOwner = uniqueAccount('sendauth');
    await unregisterDomain(before.domain);
    assert.equal(await registerDomain(before.domain, newOwner), 'registered');
    const message = await dispatchUntilFinal(uuid, sendAt);
    assert.equal(message?.status, 'failed');
    assert.match(message?.history.at(-1)?.detail ?? '', /no longer belongs to this account/);
    assert.deepEqual(smtpTransactions(uuid), []);

    // The new owner's own mail goes out, signed with its new key.
    const after: TestAccount = {
      account: newOwner,
      domain: before.domain,
      token: await mintToken({ account: newOwner }),
      sender: before.sender,
    };
    const sent = await addMessage(after.token, {
      message_sender: after.sender,
      to: ['reader@example.net'],
      subject: 'Mine now',
      content: { kind: 'text_only', text: 'Hello' },
    });
    const delivered = await waitForMessage(sent.uuid, isFinal);
    assert.equal(delivered.status, 'delivered');
    const [ownKey] = await getActiveSigningKeys(before.domain, newOwner);
    assert.ok(ownKey);
    assert.match(outboxEml(sent.uuid)?.toString('latin1') ?? '', new RegExp(`s=${ownKey.selector};`));
  });

  it('the signing step checks the owner on its own read: a stale check still never signs with another account’s key', async () => {
    const { sendQueuedMessage } = await import('../../shared/delivery/send-message.ts');
    const previous = uniqueAccount('sendauth');
    const domain = uniqueDomain('sendauth');
    await registerDomain(domain, previous);
    const uuid = await putTestMessage({ account: previous, domain, to: ['reader@example.net'] });
    await unregisterDomain(domain);
    await registerDomain(domain, uniqueAccount('sendauth'));
    assert.deepEqual(await getActiveSigningKeys(domain, previous), [], 'no key for the previous owner');

    // The sender's cached check still says "yours" (as within its 30 seconds): signing refuses.
    const result = await sendQueuedMessage(uuid, { authorize: async () => undefined });
    assert.deepEqual(result, { result: 'done', status: 'failed' });
    const message = await getDeliveryMessage(uuid);
    assert.match(message?.history.at(-1)?.detail ?? '', /no active DKIM key of this account/);
    assert.match(message?.history.at(-1)?.detail ?? '', /never sent unsigned/);
    assert.deepEqual(smtpTransactions(uuid), []);
  });

  it('a registered domain without an active key is not sent unsigned', async () => {
    const { sendQueuedMessage } = await import('../../shared/delivery/send-message.ts');
    const account = uniqueAccount('sendauth');
    const domain = uniqueDomain('sendauth');
    assert.equal(await putDomain(domain, account), true, 'registered without a key');
    const uuid = await putTestMessage({ account, domain, to: ['reader@example.net'] });
    assert.deepEqual(await sendQueuedMessage(uuid), { result: 'done', status: 'failed' });
    assert.deepEqual(smtpTransactions(uuid), []);
  });
});
