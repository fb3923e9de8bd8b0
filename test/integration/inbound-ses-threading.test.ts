import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { getDeliveryMessage } from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain, setReceiving } from '../../shared/domains/registry.ts';
import { getSesMessageIds, putSesMessageId } from '../../shared/inbound/store/ses-message-ids.ts';
import { waitForMessage } from '../support/delivery.ts';
import { call, hostInfo, mintToken, uniqueAccount, uniqueDomain } from '../support/host.ts';
import { type InboundSummary, sendInbound } from '../support/inbound.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';
import { type SesSentMessage, type SesStandIn, startSesStandIn } from '../support/ses-stand-in.ts';

/**
 * Threading of replies to mail sent through Amazon SES (docs/inbound.md, "Threading"), end to end:
 * a secondary host sends with `MAIL_TRANSPORT=ses` through the real SES transport and AWS SDK to a
 * local SESv2 stand-in, which replaces the Message-ID with `<SES id@email.amazonses.com>` as SES
 * does and relays to the host's recipient sink. Replies arrive over real SMTP at the host's inbound
 * mail server and name SES's id; the sender's record of that id threads them, for the sending
 * account only. The same path shows what else SES is given with each message: its tags.
 */
let ses: SesStandIn;
let host: SecondaryHost;

interface Sender {
  account: string;
  domain: string;
  token: string;
}

const tokenFor = (account: string) =>
  mintToken({ account, signer: { ...host, issuer: host.env.AUTH_ISSUER ?? host.issuer } });

async function sender(prefix: string, receiving: boolean): Promise<Sender> {
  const account = uniqueAccount(prefix);
  const domain = uniqueDomain(prefix);
  await registerDomain(domain, account);
  if (receiving) await setReceiving(domain, true);
  const token = await mintToken({
    account,
    signer: { ...host, issuer: host.env.AUTH_ISSUER ?? host.issuer },
  });
  return { account, domain, token };
}

/** Sends one message through the host (SES transport) and waits until SES accepted it. */
async function sendThroughSes(
  from: Sender,
  subject: string,
  extra: Record<string, unknown> = {},
): Promise<{ uuid: string; ses: SesSentMessage }> {
  const added = await call('POST', '/message/add-1.0', {
    baseUrl: host.url,
    token: from.token,
    body: {
      message_sender: `shop@${from.domain}`,
      to: ['Ada <ada@customer.test>'],
      subject,
      content: { kind: 'text_only', text: 'Your order is ready.' },
      ...extra,
    },
  });
  assert.equal(added.status, 200, added.text);
  const uuid = (added.body as { data: { message_uuid: string } }).data.message_uuid;
  const message = await waitForMessage(uuid, (current) => !['queued', 'processing'].includes(current.status));
  assert.equal(message.status, 'sent', JSON.stringify(message.history));
  const accepted = ses.sent.find((entry) => entry.messageUuid === uuid);
  assert.ok(accepted, `the SES stand-in received no message tagged ${uuid}`);
  return { uuid, ses: accepted };
}

async function waitForReply(who: Sender, recipient: string): Promise<InboundSummary> {
  return vi.waitFor(
    async () => {
      const page = await call<{ data: { inbound: InboundSummary[] } }>('POST', '/inbound/query-1.0', {
        baseUrl: host.url,
        token: who.token,
        body: { filters: { recipient } },
      });
      const [first] = page.status === 200 ? page.body.data.inbound : [];
      if (first === undefined) throw new Error(`no inbound message for ${recipient}: ${page.text}`);
      return first;
    },
    { timeout: 90_000, interval: 250 },
  );
}

const inboundPort = () => Number(new URL(host.env.INBOUND_SMTP_URL as string).port);

/** A reply over real SMTP to the host's inbound mail server; its summary once stored. */
async function reply(
  who: Sender,
  to: string,
  headers: { inReplyTo: string; references?: string[] },
): Promise<InboundSummary> {
  const outcome = await sendInbound(
    { from: 'Ada <ada@customer.test>', to, subject: 'Re: your message', text: 'Thanks', ...headers },
    { port: inboundPort() },
  );
  assert.ok(outcome.ok, outcome.response);
  return waitForReply(who, to);
}

beforeAll(async () => {
  ses = await startSesStandIn();
  host = await startSecondaryHost({
    MAIL_TRANSPORT: 'ses',
    AWS_ENDPOINT_URL_SESV2: ses.url,
    // The run's DNS server answers the inbound server's SPF/DKIM/DMARC lookups at once.
    DNS_SERVERS: hostInfo().dns.server,
  });
  // What SES accepts goes to the host's recipient sink.
  ses.relayTo(host.env.SMTP_URL as string);
  // This test process arranges data in the secondary host's emulators.
  for (const [name, value] of Object.entries(host.env)) process.env[name] = value;
});

afterAll(async () => {
  await host?.stop();
  await ses?.close();
});

describe('threading replies to mail sent through SES', () => {
  it('records SES’s id of mail from a receiving domain, and threads a reply that names it', async () => {
    const shop = await sender('ses-shop', true);
    const sent = await sendThroughSes(shop, 'Your order 42');

    // SES's Message-ID went out, not the service's, and reached the recipients' server.
    assert.equal(sent.ses.messageIdHeader, `<${sent.ses.sesMessageId}@email.amazonses.com>`);
    const head = sent.ses.raw.toString('latin1').split(/\r?\n\r?\n/)[0] ?? '';
    assert.deepEqual(head.match(/^message-id:.*$/gim), [`Message-ID: ${sent.ses.messageIdHeader}`]);
    const transactions = readFileSync(join(host.env.OUTBOX_DIR as string, 'transactions.jsonl'), 'utf8');
    assert.ok(
      transactions.includes(`"mail_from":"${sent.ses.sesMessageId}@amazonses.com"`),
      'the stand-in relayed the message to the recipient sink',
    );
    // The sender kept SES's answer and wrote the record naming the account and the message.
    assert.equal((await getDeliveryMessage(sent.uuid))?.relay?.message_id, sent.ses.sesMessageId);
    const records = await getSesMessageIds([sent.ses.sesMessageId]);
    const record = records.get(sent.ses.sesMessageId);
    assert.equal(record?.account_id, shop.account);
    assert.equal(record?.message_uuid, sent.uuid);
    assert.equal(record?.tenant, shop.domain);
    // TTL like received mail: RETENTION_DAYS (35 by default) from the send.
    const days = ((record?.expires_at ?? 0) - Date.now() / 1000) / 86_400;
    assert.ok(days > 34.9 && days <= 35, `expires in ${days} days`);

    // A repeated write (a retried step) changes nothing.
    assert.equal(
      await putSesMessageId({ ...(record as NonNullable<typeof record>), message_uuid: 'x' }),
      false,
    );
    assert.equal(
      (await getSesMessageIds([sent.ses.sesMessageId])).get(sent.ses.sesMessageId)?.message_uuid,
      sent.uuid,
    );

    const received = await reply(shop, `orders@${shop.domain}`, {
      inReplyTo: sent.ses.messageIdHeader,
      references: [sent.ses.messageIdHeader],
    });
    assert.equal(received.reply_to_message_uuid, sent.uuid);
    assert.equal(received.in_reply_to, sent.ses.messageIdHeader);
  });

  it('writes no record for mail no reply can come back to here', async () => {
    const quiet = await sender('ses-quiet', false);
    const sent = await sendThroughSes(quiet, 'Receipt');
    assert.equal((await getDeliveryMessage(sent.uuid))?.relay?.message_id, sent.ses.sesMessageId);
    assert.equal((await getSesMessageIds([sent.ses.sesMessageId])).size, 0);
    // A Reply-To at another account's receiving domain does not count either.
    const stranger = await sender('ses-stranger', true);
    const elsewhere = await sendThroughSes(quiet, 'Receipt', { reply_to: [`help@${stranger.domain}`] });
    assert.equal((await getSesMessageIds([elsewhere.ses.sesMessageId])).size, 0);
  });

  it('records mail sent from a non-receiving domain with Reply-To at a receiving one, and threads the reply', async () => {
    const account = uniqueAccount('ses-split');
    const mailDomain = uniqueDomain('ses-mail');
    const repliesDomain = uniqueDomain('ses-replies');
    await registerDomain(mailDomain, account);
    await registerDomain(repliesDomain, account);
    await setReceiving(repliesDomain, true);
    const who = { account, domain: mailDomain, token: await tokenFor(account) };
    const support = `support@${repliesDomain}`;
    const sent = await sendThroughSes(who, 'Ticket 7', { reply_to: [support] });
    assert.equal(
      (await getSesMessageIds([sent.ses.sesMessageId])).get(sent.ses.sesMessageId)?.message_uuid,
      sent.uuid,
    );
    const received = await reply(who, support, { inReplyTo: sent.ses.messageIdHeader });
    assert.equal(received.reply_to_message_uuid, sent.uuid);
  });

  it('never links another account’s message, and goes on to the next candidate', async () => {
    const shop = await sender('ses-a', true);
    const other = await sender('ses-b', true);
    const shopSent = await sendThroughSes(shop, 'Invoice');
    const otherSent = await sendThroughSes(other, 'Newsletter');

    // Only the first account's SES id, received by the other account: no link.
    const lonely = await reply(other, `help@${other.domain}`, {
      inReplyTo: shopSent.ses.messageIdHeader,
      references: [shopSent.ses.messageIdHeader],
    });
    assert.equal(lonely.reply_to_message_uuid, null);

    // The foreign id first (In-Reply-To), the account's own further back in References: its own.
    const mixed = await reply(other, `news@${other.domain}`, {
      inReplyTo: shopSent.ses.messageIdHeader,
      references: [otherSent.ses.messageIdHeader, '<CAF=x1@mail.gmail.com>', shopSent.ses.messageIdHeader],
    });
    assert.equal(mixed.reply_to_message_uuid, otherSent.uuid);
  });
});

describe('message tags sent to SES', () => {
  it('passes a message’s tags to SES’s EmailTags unchanged, after the service’s message_uuid', async () => {
    const shop = await sender('ses-tags', false);
    const tags = [
      { name: 'category', value: 'order-confirmation' },
      { name: 'Campaign_2024-Q3', value: 'spring_sale-B' },
    ];
    const sent = await sendThroughSes(shop, 'Tagged', { tags });
    assert.deepEqual(sent.ses.emailTags, [
      { Name: 'message_uuid', Value: sent.uuid },
      { Name: 'category', Value: 'order-confirmation' },
      { Name: 'Campaign_2024-Q3', Value: 'spring_sale-B' },
    ]);
    // A message without tags is given only the service's own.
    const plain = await sendThroughSes(shop, 'Untagged');
    assert.deepEqual(plain.ses.emailTags, [{ Name: 'message_uuid', Value: plain.uuid }]);
  });
});
