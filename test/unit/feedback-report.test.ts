import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { bounceEvent, deliveryStatusOf } from '../../infra/local/feedback-report.ts';
import { interpretSesEvent } from '../../shared/delivery/model/ses-events.ts';

/** The local feedback endpoint's reading of a DSN (RFC 3464), and the SES event it makes of it. */
const uuid = '5d0c7e3b-8a0e-4f7a-9d6c-2b1f0e9a7c11';

function dsn(recipientBlocks: string[]): Buffer {
  return Buffer.from(
    [
      'From: MAILER-DAEMON@mx.example.net',
      `To: ${uuid}@bounce.shop.example`,
      'Subject: Delivery Status Notification',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b"',
      '',
      '--b',
      'Content-Type: text/plain',
      '',
      'Report.',
      '--b',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.net',
      '',
      ...recipientBlocks.flatMap((block) => [block, '']),
      '--b--',
      '',
    ].join('\r\n'),
  );
}

describe('feedback reports', () => {
  it('a failed 5.x.x recipient is a Permanent bounce; delayed ones are left out; folded fields join', async () => {
    const report = await deliveryStatusOf(
      dsn([
        'Final-Recipient: rfc822; Gone@example.net\r\nAction: failed\r\nStatus: 5.1.1\r\nDiagnostic-Code: smtp; 550 5.1.1\r\n user unknown',
        'Final-Recipient: rfc822; slow@example.net\r\nAction: delayed\r\nStatus: 4.4.1',
      ]),
    );
    assert.deepEqual(report, {
      reportingMta: 'dns; mx.example.net',
      recipients: [
        {
          recipient: 'Gone@example.net',
          action: 'failed',
          status: '5.1.1',
          diagnosticCode: 'smtp; 550 5.1.1 user unknown',
        },
        { recipient: 'slow@example.net', action: 'delayed', status: '4.4.1' },
      ],
    });
    const event = bounceEvent(report, uuid, 'feedback-1', 'svc-mail', new Date('2026-11-28T18:00:00Z'));
    const effect = interpretSesEvent(event);
    assert.equal(effect?.messageUuid, uuid);
    assert.deepEqual(
      effect?.updates.map((update) => [update.email, update.status, update.detail]),
      [['Gone@example.net', 'bounced', 'Permanent/General: smtp; 550 5.1.1 user unknown']],
    );
    assert.deepEqual(
      effect?.suppress?.map((entry) => [entry.email, entry.reason]),
      [['Gone@example.net', 'hard_bounce']],
    );
  });

  it('a failed 4.x.x recipient is Transient and suppresses nothing', async () => {
    const report = await deliveryStatusOf(
      dsn(['Final-Recipient: rfc822; full@example.net\r\nAction: failed\r\nStatus: 4.2.2']),
    );
    assert.ok(report !== undefined);
    const effect = interpretSesEvent(bounceEvent(report, uuid, 'feedback-2', 'svc-mail', new Date()));
    assert.equal(effect?.updates[0]?.kind, 'Transient/General');
    assert.deepEqual(effect?.suppress, []);
  });

  it('no event for a message that is no DSN, or one without a failed recipient', async () => {
    assert.equal(await deliveryStatusOf(Buffer.from('Subject: out of office\r\n\r\nAway.\r\n')), undefined);
    const delayed = await deliveryStatusOf(
      dsn(['Final-Recipient: rfc822; slow@example.net\r\nAction: delayed\r\nStatus: 4.4.1']),
    );
    assert.ok(delayed !== undefined);
    assert.equal(bounceEvent(delayed, uuid, 'feedback-3', 'svc-mail', new Date()), undefined);
  });
});
