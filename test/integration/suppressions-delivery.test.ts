import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { handler as deliveryEvents } from '../../functions/delivery-events/handler.ts';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { addMessage, putTestMessage, smtpTransactions, waitForStatus } from '../support/delivery.ts';
import { call, useHostEnvironment } from '../support/host.ts';
import { newAccount, type TestAccount } from '../support/messages.ts';
import {
  lookup,
  sesEvent,
  smtpRefusals,
  suppressionCall,
  waitForSuppression,
} from '../support/suppressions.ts';

useHostEnvironment();

const final = ['delivered', 'bounced', 'failed', 'suppressed'];
const tag = () => randomUUID().slice(0, 8);

async function send(who: TestAccount, recipients: { to: string[]; cc?: string[] }) {
  const { uuid } = await addMessage(who.token, {
    message_sender: who.sender,
    ...recipients,
    subject: 'Suppression test',
    content: { kind: 'text_only', text: 'Hello' },
  });
  return waitForStatus(who.token, uuid, final);
}

const recipientStatus = (message: Record<string, any>, email: string) =>
  (message.recipients as Array<{ email: string; status: string; detail?: string }>).find(
    (recipient) => recipient.email.toLowerCase() === email.toLowerCase(),
  );

describe('automatic suppression through the local SMTP relay', () => {
  it('a hard bounce suppresses the address for that account only; deleting it lets mail go out again', async () => {
    const owner = await newAccount('hb');
    const other = await newAccount('hb');
    const address = `bounce-${tag()}@example.net`;

    const first = await send(owner, { to: [address] });
    assert.equal(first.status, 'bounced', JSON.stringify(first.status_history));
    assert.deepEqual(smtpRefusals(first.message_uuid), [address], 'the relay was asked and refused (550)');
    const entry = await waitForSuppression(owner, address);
    assert.equal(entry.reason, 'hard_bounce');
    assert.equal(entry.message_uuid, first.message_uuid);
    assert.match(entry.detail, /550|5\.1\.1/);

    // The next message of the same account, to the same address in other case: no SMTP at all.
    const second = await send(owner, { to: [address.toUpperCase()] });
    assert.equal(second.status, 'suppressed', JSON.stringify(second.status_history));
    assert.equal(recipientStatus(second, address)?.status, 'suppressed');
    assert.match(recipientStatus(second, address)?.detail ?? '', /suppression list \(hard bounce on message/);
    assert.deepEqual(smtpTransactions(second.message_uuid), [], 'no SMTP transaction');
    assert.deepEqual(smtpRefusals(second.message_uuid), [], 'not even a RCPT TO');
    const history = second.status_history as Array<{ status: string; detail?: string }>;
    assert.deepEqual(
      history.map((step) => step.status),
      ['queued', 'processing', 'suppressed', 'suppressed'],
    );
    assert.equal(
      history[2]?.detail?.toLowerCase().startsWith(`${address}: on the account's suppression list`),
      true,
    );
    assert.match(history[3]?.detail ?? '', /Every recipient is on the suppression list/);

    // The status is a query filter like any other.
    const bySuppressed = await call('POST', '/message/query-1.0', {
      token: owner.token,
      body: { filters: { status: 'suppressed' } },
    });
    assert.deepEqual(
      bySuppressed.body.data.messages.map((entry: { message_uuid: string }) => entry.message_uuid),
      [second.message_uuid],
    );

    // Another account's list is its own: its message to the address is attempted (and bounces).
    const foreign = await send(other, { to: [address] });
    assert.equal(recipientStatus(foreign, address)?.status, 'bounced');
    assert.deepEqual(smtpRefusals(foreign.message_uuid), [address]);

    // Deleted from the list: the relay is asked again.
    const removed = await suppressionCall(owner, 'delete', { emails: [address] });
    assert.deepEqual(removed.body.data.deleted, [address]);
    const third = await send(owner, { to: [address] });
    assert.equal(recipientStatus(third, address)?.status, 'bounced');
    assert.deepEqual(smtpRefusals(third.message_uuid), [address]);
  });

  it('a soft refusal (4xx) never suppresses', async () => {
    // The SMTP path: the sender records 4xx refusals as failed recipients; only 5xx suppress.
    const { hardBouncesOf } = await import('../../shared/suppressions/model/suppressions.ts');
    assert.deepEqual(
      hardBouncesOf('m', [
        { email: 'a@example.net', outcome: 'rejected', permanent: false, response: '452 4.2.2 mailbox full' },
        { email: 'b@example.net', outcome: 'accepted', permanent: false },
      ]),
      [],
    );
  });

  it('a mixed message goes to the others and suppresses the listed one', async () => {
    const who = await newAccount('mix');
    const listed = `listed-${tag()}@example.net`;
    const [to, cc] = [`reader-${tag()}@example.net`, `copy-${tag()}@example.net`];
    await suppressionCall(who, 'add', { emails: [listed] });

    const message = await send(who, { to: [to, listed], cc: [cc] });
    assert.equal(message.status, 'delivered', JSON.stringify(message.status_history));
    assert.equal(recipientStatus(message, to)?.status, 'delivered');
    assert.equal(recipientStatus(message, cc)?.status, 'delivered');
    assert.equal(recipientStatus(message, listed)?.status, 'suppressed');
    assert.match(recipientStatus(message, listed)?.detail ?? '', /added manually/);
    const transactions = smtpTransactions(message.message_uuid);
    assert.equal(transactions.length, 1);
    assert.deepEqual(transactions[0]?.recipients.sort(), [to, cc].sort());
    const steps = (message.status_history as Array<{ status: string; detail?: string }>).map(
      (step) => step.status,
    );
    assert.deepEqual(steps, [
      'queued',
      'processing',
      'suppressed',
      'sent',
      // Once per recipient: the message's own status adds no third entry.
      'delivered',
      'delivered',
    ]);

    // With a bounce among the others, the message is bounced; the suppressed one does not count.
    const bouncing = `bounce-${tag()}@example.net`;
    const second = await send(who, { to: [listed, bouncing] });
    assert.equal(second.status, 'bounced');
    assert.equal(recipientStatus(second, listed)?.status, 'suppressed');
    assert.deepEqual(smtpRefusals(second.message_uuid), [bouncing]);
  });
});

describe('automatic suppression from SES events (recorded fixtures)', () => {
  it('Bounce Permanent and Complaint suppress for the sending account; Transient does not', async () => {
    const who = await newAccount('ses');
    const other = await newAccount('ses');
    const hard = `Ada-${tag()}@Example.NET`;
    const complainer = `grace-${tag()}@example.net`;
    const soft = `linus-${tag()}@example.net`;
    const uuid = await putTestMessage({
      account: who.account,
      domain: who.domain,
      to: [hard, complainer, soft],
      status: 'sent',
    });

    assert.deepEqual(await deliveryEvents(sesEvent('bounced.json', uuid, hard)), { result: 'recorded' });
    assert.deepEqual(await deliveryEvents(sesEvent('complaint.json', uuid, complainer)), {
      result: 'recorded',
    });
    assert.deepEqual(await deliveryEvents(sesEvent('bounced-transient.json', uuid, soft)), {
      result: 'recorded',
    });

    const bounced = await lookup(who, hard);
    assert.equal(bounced?.email, hard.toLowerCase(), 'stored lower-cased');
    assert.equal(bounced?.reason, 'hard_bounce');
    assert.equal(bounced?.message_uuid, uuid);
    assert.match(bounced?.detail, /^Permanent\/General: smtp; 550 5\.1\.1 user unknown/);
    const complained = await lookup(who, complainer);
    assert.equal(complained?.reason, 'complaint');
    assert.equal(complained?.message_uuid, uuid);
    assert.match(complained?.detail, /abuse/);
    assert.equal(await lookup(who, soft), null, 'a Transient bounce is not suppressed');
    const stored = await getDeliveryMessage(uuid);
    assert.equal(stored?.recipients.find((recipient) => recipient.email === soft)?.status, 'bounced');

    // The same events again (EventBridge delivers at least once) keep the first entries.
    await deliveryEvents(sesEvent('bounced.json', uuid, hard));
    await deliveryEvents(sesEvent('complaint.json', uuid, complainer));
    assert.deepEqual(await lookup(who, hard), bounced);
    assert.deepEqual(await lookup(who, complainer), complained);

    // Nothing on the other account's list.
    assert.equal(await lookup(other, hard), null);
    assert.equal(await lookup(other, complainer), null);

    // The suppressed (deliverable) address: suppressed for this account, delivered for the other,
    // and delivered again once removed from the list.
    const suppressed = await send(who, { to: [hard] });
    assert.equal(suppressed.status, 'suppressed');
    assert.deepEqual(smtpTransactions(suppressed.message_uuid), []);
    const foreign = await send(other, { to: [hard] });
    assert.equal(foreign.status, 'delivered');
    assert.equal(smtpTransactions(foreign.message_uuid).length, 1);
    await suppressionCall(who, 'delete', { emails: [hard] });
    const again = await send(who, { to: [hard] });
    assert.equal(again.status, 'delivered');
    assert.equal(smtpTransactions(again.message_uuid).length, 1);

    // The complainer too, and a soft-bounced address is still mailed.
    assert.equal((await send(who, { to: [complainer] })).status, 'suppressed');
    assert.equal((await send(who, { to: [soft] })).status, 'delivered');
  });
});
