import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { handler as deliveryEvents } from '../../functions/delivery-events/handler.ts';
import { platformSuppressionDetail } from '../../shared/delivery/model/ses-events.ts';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { addMessage, putTestMessage, waitForStatus } from '../support/delivery.ts';
import { useHostEnvironment } from '../support/host.ts';
import { newAccount } from '../support/messages.ts';
import { lookup, sesEvent } from '../support/suppressions.ts';

/**
 * SES's account-level suppression list is shared by every tenant: a bounce of subtype
 * `OnAccountSuppressionList` (SES did not even try) may stem from another tenant's complaint, so it
 * is recorded as what it is (the recipient `suppressed`, with a detail naming the shared list) and
 * never copied into the sending account's own list as a hard bounce.
 */
useHostEnvironment();

describe('SES account-level suppression (OnAccountSuppressionList)', () => {
  it('never enters the tenant’s list; the recipient is suppressed by the shared list, and the tenant can still mail the address', async () => {
    const tenant = await newAccount('acctsup');
    const listed = `listed-${randomUUID().slice(0, 8)}@example.net`;
    const other = `other-${randomUUID().slice(0, 8)}@example.net`;
    const uuid = await putTestMessage({
      account: tenant.account,
      domain: tenant.domain,
      to: [listed, other],
      status: 'sent',
    });

    assert.deepEqual(await deliveryEvents(sesEvent('bounced-account-suppression.json', uuid, listed)), {
      result: 'recorded',
    });
    // A complaint of the same subtype (SES skipped an address that complained before) neither.
    const complaint = sesEvent('complaint.json', uuid, other);
    (complaint.detail as { complaint: Record<string, unknown> }).complaint.complaintSubType =
      'OnAccountSuppressionList';
    assert.deepEqual(await deliveryEvents(complaint), { result: 'recorded' });

    assert.equal(await lookup(tenant, listed), null, 'not a hard bounce on the tenant’s list');
    assert.equal(await lookup(tenant, other), null, 'not a complaint on the tenant’s list');
    const stored = await getDeliveryMessage(uuid);
    const recipient = (email: string) => stored?.recipients.find((entry) => entry.email === email);
    assert.equal(recipient(listed)?.status, 'suppressed');
    assert.equal(recipient(listed)?.detail, platformSuppressionDetail);
    assert.equal(recipient(other)?.status, 'suppressed');
    assert.equal(stored?.status, 'suppressed', 'nothing left the platform');
    assert.ok(
      stored?.history.some(
        (entry) => entry.recipient === listed && /SES account-level/.test(entry.detail ?? ''),
      ),
      'the history says why',
    );

    // The tenant's own list does not hold the address, so its next message goes out (locally, the
    // embedded MTA delivers it).
    const next = await addMessage(tenant.token, {
      message_sender: tenant.sender,
      to: [listed],
      subject: 'Next',
      content: { kind: 'text_only', text: 'Hello again' },
    });
    assert.equal(
      (await waitForStatus(tenant.token, next.uuid, ['delivered', 'suppressed'])).status,
      'delivered',
    );
  });

  it('an ordinary Permanent bounce still suppresses for the sending account', async () => {
    const tenant = await newAccount('acctsup');
    const address = `gone-${randomUUID().slice(0, 8)}@example.net`;
    const uuid = await putTestMessage({
      account: tenant.account,
      domain: tenant.domain,
      to: [address],
      status: 'sent',
    });
    await deliveryEvents(sesEvent('bounced.json', uuid, address));
    assert.equal((await lookup(tenant, address))?.reason, 'hard_bounce');
  });
});
