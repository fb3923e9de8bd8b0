import { generateKeyPairSync, randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer';
import { vi } from 'vitest';
import { setReceiving } from '../../shared/domains/registry.ts';
import { publishTxt } from './dns.ts';
import { call, hostInfo } from './host.ts';
import { newAccount, type TestAccount } from './messages.ts';

/**
 * Inbound mail for the integration tests: a receiving account, mail sent over real SMTP to the
 * local host's inbound mail server (INBOUND_SMTP_PORT), and sender domains whose SPF, DKIM and
 * DMARC records live on the test DNS server.
 */
export async function receivingAccount(prefix = 'in'): Promise<TestAccount> {
  const who = await newAccount(prefix);
  await setReceiving(who.domain, true);
  return who;
}

export function inboundPort(): number {
  return Number(new URL(hostInfo().env.INBOUND_SMTP_URL as string).port);
}

/** A sending domain with SPF (127.0.0.1), a DMARC policy and a DKIM key, published on the test DNS. */
export interface SenderDomain {
  domain: string;
  selector: string;
  privateKey: string;
}

export function senderDomain(): SenderDomain {
  const domain = `sender-${randomUUID().slice(0, 8)}.test`;
  const selector = 's1';
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKey = pair.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  // A TXT character-string holds at most 255 bytes: the 2048-bit key spans several.
  const record = `v=DKIM1; k=rsa; p=${publicKey}`;
  publishTxt(`${selector}._domainkey.${domain}`, [record.match(/.{1,255}/g) as string[]]);
  publishTxt(domain, [['v=spf1 ip4:127.0.0.1 -all']]);
  publishTxt(`_dmarc.${domain}`, [['v=DMARC1; p=reject']]);
  return { domain, selector, privateKey: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

export interface SmtpOutcome {
  ok: boolean;
  response: string;
  responseCode?: number;
  rejected: string[];
}

/** Sends one message to the inbound mail server, as another MTA would; the SMTP outcome. */
export async function sendInbound(
  message: Mail.Options,
  /** `port`: another host's inbound mail server (default: this run's host). */
  options: { dkim?: SenderDomain; port?: number } = {},
): Promise<SmtpOutcome> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: options.port ?? inboundPort(),
    secure: false,
    ignoreTLS: true,
    name: 'mail.sender.test',
    ...(options.dkim === undefined
      ? {}
      : {
          dkim: {
            domainName: options.dkim.domain,
            keySelector: options.dkim.selector,
            privateKey: options.dkim.privateKey,
          },
        }),
  });
  try {
    const info = await transport.sendMail(message);
    return { ok: info.rejected.length === 0, response: info.response, rejected: info.rejected.map(String) };
  } catch (error) {
    const failure = error as { response?: string; responseCode?: number; rejected?: string[] };
    return {
      ok: false,
      response: failure.response ?? String(error),
      ...(failure.responseCode === undefined ? {} : { responseCode: failure.responseCode }),
      rejected: (failure.rejected ?? []).map(String),
    };
  } finally {
    transport.close();
  }
}

export interface InboundSummary {
  inbound_uuid: string;
  recipient: string;
  subject: string;
  auth: { spf: string; dkim: string; dmarc: string };
  [field: string]: unknown;
}

/** Polls the list (one recipient's mail) until `count` messages are there. */
export async function waitForInbound(
  who: TestAccount,
  recipient: string,
  count = 1,
  timeoutMs = 60_000,
): Promise<InboundSummary[]> {
  return vi.waitFor(
    async () => {
      const page = await call<{ data: { inbound: InboundSummary[] } }>('POST', '/inbound/query-1.0', {
        token: who.token,
        body: { filters: { recipient } },
      });
      if (page.status === 200 && page.body.data.inbound.length >= count) return page.body.data.inbound;
      throw new Error(`no ${count} inbound message(s) for ${recipient} within ${timeoutMs} ms: ${page.text}`);
    },
    { timeout: timeoutMs, interval: 200 },
  );
}

export async function inboundDetails(who: TestAccount, inboundUuid: string) {
  const result = await call<{ data: Record<string, unknown> }>('POST', '/inbound/query-1.0', {
    token: who.token,
    body: { inbound_uuid: inboundUuid },
  });
  if (result.status !== 200) throw new Error(`query ${inboundUuid}: ${result.status} ${result.text}`);
  return result.body.data as {
    inbound_uuid: string;
    from: { email: string; name: string | null } | null;
    to: Array<{ email: string; name: string | null }>;
    subject: string;
    text: string | null;
    html: string | null;
    stripped_text_reply: string | null;
    headers: Array<{ name: string; value: string }>;
    attachments: Array<{ filename: string; content_type: string; size: number; url: string }>;
    raw_url: string;
    auth: { spf: string; dkim: string; dmarc: string };
    spam: { verdict: string };
    mailbox_hash: string | null;
    reply_to_message_uuid: string | null;
    in_reply_to: string | null;
    parse_error: string | null;
    [field: string]: unknown;
  };
}
