import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { replyDomainsOf } from '../../shared/delivery/ses-message-ids.ts';
import {
  inboundSummaryView,
  inboundUuidOf,
  mailboxHashOf,
  sesMessageIdOf,
  threadCandidates,
} from '../../shared/inbound/model/inbound.ts';
import { parseReceipt } from '../../shared/inbound/model/receipt.ts';
import { inboundIndexAttributes } from '../../shared/inbound/store/inbound-index.ts';

const sent = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0e';
/** SES message ids as SES returns them (us-east-1, then another region's). */
const sesEast = '0100019356a1b2c3-4d5e6f70-8192-4a3b-bc4d-5e6f708192a3-000000';
const sesWest = '0102019356a1b2c3-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d-000000';
const older = '0193a1f2-7c4e-7b1a-9d2e-5f6a7b8c9d0f';

/** An SES receipt notification of an S3 action, as SES publishes it (fields the function reads). */
function notification(overrides: Record<string, unknown> = {}) {
  return {
    notificationType: 'Received',
    mail: {
      timestamp: '2026-11-24T10:15:00.123Z',
      source: 'ada@sender.test',
      messageId: 'o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1',
    },
    receipt: {
      timestamp: '2026-11-24T10:15:00.456Z',
      recipients: ['Support+Ticket@Example.test', 'sales@example.test'],
      spfVerdict: { status: 'PASS' },
      dkimVerdict: { status: 'FAIL' },
      dmarcVerdict: { status: 'GRAY' },
      spamVerdict: { status: 'PROCESSING_FAILED' },
      virusVerdict: { status: 'PASS' },
      action: {
        type: 'S3',
        bucketName: 'bucket',
        objectKey: 'inbound/raw/o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1',
      },
      ...overrides,
    },
  };
}

describe('SES receipts', () => {
  it('maps SES verdicts and lower-cases the envelope recipients', () => {
    const parsed = parseReceipt(JSON.stringify(notification()));
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.receipt.recipients, ['support+ticket@example.test', 'sales@example.test']);
    assert.deepEqual(parsed.receipt.auth, { spf: 'pass', dkim: 'fail', dmarc: 'none' });
    assert.equal(parsed.receipt.spam, 'error');
    assert.equal(parsed.receipt.receivedAt, '2026-11-24T10:15:00.456Z');
    assert.equal(parsed.receipt.objectKey, 'inbound/raw/o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1');
  });

  it('reads the notification inside an SNS envelope too, and reports a missing scan as not_scanned', () => {
    const inner = notification();
    delete (inner.receipt as Record<string, unknown>).spamVerdict;
    const parsed = parseReceipt(JSON.stringify({ Type: 'Notification', Message: JSON.stringify(inner) }));
    assert.ok(parsed.ok);
    assert.equal(parsed.receipt.spam, 'not_scanned');
  });

  it('ignores what is not a receipt of a stored message', () => {
    for (const body of [
      'not json',
      JSON.stringify({ Service: 'Amazon S3', Event: 's3:TestEvent' }),
      JSON.stringify(notification({ action: { type: 'Lambda', functionArn: 'arn' } })),
      JSON.stringify(notification({ recipients: [] })),
      JSON.stringify({ ...notification(), mail: { messageId: 'AMAZON_SES_SETUP_NOTIFICATION' } }),
    ]) {
      assert.equal(parseReceipt(body).ok, false, body);
    }
  });
});

describe('received message fields', () => {
  it('mailbox_hash is what follows the first + of the local part', () => {
    assert.equal(mailboxHashOf('support+ticket-42@example.test'), 'ticket-42');
    assert.equal(mailboxHashOf('a+b+c@example.test'), 'b+c');
    assert.equal(mailboxHashOf('support@example.test'), null);
    assert.equal(mailboxHashOf('support+@example.test'), null);
  });

  it('thread candidates: In-Reply-To first, then References from the nearest, only <uuid@domain> ids', () => {
    assert.deepEqual(
      threadCandidates(
        `<${sent}@Shop.Example>`,
        `<CAF=x@mail.gmail.com> <${older}@shop.example> <${sent}@shop.example>`,
      ),
      [
        { kind: 'message', messageUuid: sent, domain: 'shop.example' },
        { kind: 'message', messageUuid: older, domain: 'shop.example' },
      ],
    );
    // Not SES's id form (no dash-separated groups): nothing to look up.
    assert.deepEqual(threadCandidates(undefined, '<0100018c@email.amazonses.com>'), []);
    const long = Array.from(
      { length: 40 },
      (_, index) => `<${sent.slice(0, -2)}${String(index).padStart(2, '0')}@d.test>`,
    ).join(' ');
    assert.equal(threadCandidates(undefined, long).length, 20);
  });

  it('SES Message-IDs: email.amazonses.com (us-east-1) and <region>.amazonses.com, nothing else', () => {
    assert.equal(sesMessageIdOf(`<${sesEast}@email.amazonses.com>`), sesEast);
    assert.equal(sesMessageIdOf(`<${sesWest}@eu-west-1.amazonses.com>`), sesWest);
    assert.equal(sesMessageIdOf(`<${sesWest}@us-gov-west-1.amazonses.com>`), sesWest);
    assert.equal(sesMessageIdOf(`<${sesWest}@ap-southeast-2.AmazonSES.com>`), sesWest);
    assert.equal(sesMessageIdOf(` ${sesEast.toUpperCase()}@email.amazonses.com `), sesEast);
    // Not SES's: another domain, a look-alike domain, a sub-domain, a local part not an SES id.
    assert.equal(sesMessageIdOf(`<${sesEast}@example.test>`), undefined);
    assert.equal(sesMessageIdOf(`<${sesEast}@email.amazonses.com.evil.test>`), undefined);
    assert.equal(sesMessageIdOf(`<${sesEast}@mail.email.amazonses.com>`), undefined);
    assert.equal(sesMessageIdOf(`<${sesEast}@amazonses.com>`), undefined);
    assert.equal(sesMessageIdOf('<CAF=x+y@email.amazonses.com>'), undefined);
    assert.equal(sesMessageIdOf(`<${'0-'.repeat(60)}0@email.amazonses.com>`), undefined);
    assert.equal(sesMessageIdOf('no id at all'), undefined);
  });

  it('the domains a reply may go to: the sending domain, then Reply-To (else From), each once, 5 at most', () => {
    const address = (email: string) => ({ email });
    assert.deepEqual(
      replyDomainsOf({
        tenant: 'mail.shop.test',
        from: [address('news@other.shop.test')],
        reply_to: [address('Support@Replies.Shop.test'), address('help@mail.shop.test')],
      }),
      ['mail.shop.test', 'replies.shop.test'],
    );
    assert.deepEqual(
      replyDomainsOf({ tenant: 'mail.shop.test', from: [address('news@other.shop.test')], reply_to: [] }),
      ['mail.shop.test', 'other.shop.test'],
    );
    const many = Array.from({ length: 9 }, (_, index) => address(`a@d${index}.test`));
    assert.equal(replyDomainsOf({ tenant: 'mail.shop.test', from: [], reply_to: many }).length, 5);
  });

  it('thread candidates mix both forms in order, each once, 20 at most', () => {
    assert.deepEqual(
      threadCandidates(
        `<${sesEast}@email.amazonses.com>`,
        [
          `<${older}@shop.example>`,
          `<${sesWest}@eu-west-1.amazonses.com>`,
          '<CAF=x@mail.gmail.com>',
          `<${sesEast}@email.amazonses.com>`,
        ].join(' '),
      ),
      [
        { kind: 'ses', sesMessageId: sesEast },
        { kind: 'ses', sesMessageId: sesWest },
        { kind: 'message', messageUuid: older, domain: 'shop.example' },
      ],
    );
    // A uuid-shaped local part at SES's domain is SES's id, never one of the service's uuids.
    assert.deepEqual(threadCandidates(`<${sent}@email.amazonses.com>`, undefined), [
      { kind: 'ses', sesMessageId: sent },
    ]);
    const mixed = Array.from({ length: 30 }, (_, index) =>
      index % 2 === 0
        ? `<${sesEast.slice(0, -2)}${String(index).padStart(2, '0')}@email.amazonses.com>`
        : `<${sent.slice(0, -2)}${String(index).padStart(2, '0')}@d.test>`,
    ).join(' ');
    const candidates = threadCandidates(undefined, mixed);
    assert.equal(candidates.length, 20);
    // Nearest first: the last id of References leads.
    assert.deepEqual(candidates[0], {
      kind: 'message',
      messageUuid: `${sent.slice(0, -2)}29`,
      domain: 'd.test',
    });
    assert.deepEqual(candidates[1], { kind: 'ses', sesMessageId: `${sesEast.slice(0, -2)}28` });
  });

  it('the inbound uuid is fixed by the SES message id and the recipient, and is a UUID', () => {
    const one = inboundUuidOf('abc', 'Support@Example.test');
    assert.equal(one, inboundUuidOf('abc', 'support@example.test'));
    assert.notEqual(one, inboundUuidOf('abc', 'sales@example.test'));
    assert.notEqual(one, inboundUuidOf('abd', 'support@example.test'));
    assert.match(one, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('index keys are sharded per account, recipient and sender, sorted by received time', () => {
    const attributes = inboundIndexAttributes({
      inbound_uuid: one(),
      account_id: 'acct',
      received_at: '2026-11-24T10:15:00.000Z',
      recipient: 'Support@Example.test',
      sender: 'Ada@Sender.test',
    });
    assert.match(attributes.gsi2pk as string, /^INBOUND#acct#[0-3]$/);
    assert.match(attributes.gsi1pk as string, /^INBOUND_TO#acct#support@example\.test#[0-3]$/);
    assert.match(attributes.gsi3pk as string, /^INBOUND_FROM#acct#ada@sender\.test#[0-3]$/);
    assert.equal(attributes.gsi1sk, `2026-11-24T10:15:00.000Z#${one()}`);
    assert.equal(attributes.gsi3sk, attributes.gsi1sk);
    // Many messages of one account spread over all four shards.
    const shards = new Set(
      Array.from(
        { length: 64 },
        (_, index) =>
          inboundIndexAttributes({
            inbound_uuid: inboundUuidOf(`m${index}`, 'a@b.test'),
            account_id: 'acct',
            received_at: 'x',
            recipient: 'a@b.test',
          }).gsi2pk,
      ),
    );
    assert.equal(shards.size, 4);
  });

  it('the summary (and the event) carries metadata only, names as null when absent', () => {
    const view = inboundSummaryView({
      inbound_uuid: one(),
      account_id: 'acct',
      domain: 'example.test',
      recipient: 'support@example.test',
      received_at: '2026-11-24T10:15:00.000Z',
      ses_message_id: 'abc',
      from: { email: 'ada@sender.test' },
      to: [{ email: 'support@example.test', name: 'Support' }],
      auth: { spf: 'pass', dkim: 'none', dmarc: 'none' },
      spam: { verdict: 'pass' },
      objects: { raw: 'inbound/raw/abc', content: 'inbound/parsed/abc/content.json' },
      size: 1234,
      expires_at: 0,
    });
    assert.deepEqual(view.from, { email: 'ada@sender.test', name: null });
    assert.equal(view.received_at, '2026-11-24T10:15:00.000+00:00');
    assert.deepEqual(view.cc, []);
    for (const field of ['text', 'html', 'headers', 'objects', 'account_id', 'raw_url'])
      assert.ok(!(field in view), field);
  });
});

function one(): string {
  return inboundUuidOf('abc', 'support@example.test');
}
