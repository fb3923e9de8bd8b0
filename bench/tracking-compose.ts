import { generateKeyPairSync } from 'node:crypto';
import { type ComposableMessage, composeSignedMessage } from '../shared/delivery/compose-message.ts';
import { sideBySide } from './stats.ts';

/**
 * Section 16's composition, alone in a Node process as the sender composes in its own Lambda
 * instance: a 50 KB HTML message with 100 links composed and DKIM-signed (rsa-sha256) tracked
 * (opens and clicks) and untracked, side by side. In the benchmark's own process the local host's
 * pollers and routes would run inside the timed awaits. Both are composed `warmUps` times first: a
 * sender instance composes many messages, and a fresh process runs its first ones before V8 has
 * optimised the parser and the MIME code. Prints the side by side's figures as JSON.
 * Usage: node bench/tracking-compose.ts <rounds> (LINK_TOKEN_KEY and PUBLIC_API_URL set)
 */
export const linkCount = 100;
const warmUps = 20;

export function newsletter(): string {
  const rows: string[] = [];
  for (let index = 0; index < linkCount; index++) {
    rows.push(
      `<tr><td style="padding:8px;font-family:Arial,sans-serif">Item ${index}: a product line with its description, price and a short note for the reader.</td><td><a href="https://shop.example/items/${index}?utm_source=mail&amp;utm_campaign=weekly">View item ${index}</a></td></tr>`,
    );
  }
  let html = `<html><head><title>Weekly</title></head><body><table>${rows.join('\n')}</table>`;
  while (html.length < 50 * 1024)
    html += '<p style="color:#333">More news from the shop, written for the reader.</p>\n';
  return `${html}</body></html>`;
}

function composable(uuid: string, domain: string): ComposableMessage {
  return {
    message_uuid: uuid,
    account_id: 'bench',
    tenant: domain,
    message_sender: `news@${domain}`,
    content_kind: 'html_only',
    from: [{ email: `news@${domain}` }],
    to: [{ email: 'ada@recipient.test' }],
    cc: [],
    reply_to: [],
    subject: 'Weekly',
    headers: {},
    attachments: [],
  };
}

async function main(rounds: number): Promise<void> {
  const domain = 'bench-news.test';
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keys = [
    {
      domain,
      selector: 'bench',
      algorithm: 'rsa-sha256' as const,
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    },
  ];
  const html = newsletter();
  const bodies = { html: Buffer.from(html), text: Buffer.from('Weekly news'), attachments: [] };
  const message = composable('2a52b27c-0980-473f-96bc-aa7afca8d390', domain);
  const base = { at: new Date(), keys, transport: 'smtp' as const, feedbackTag: 'bench' };
  const tracking = { settings: { opens: true, clicks: true }, recipientIndex: 0 };
  const tracked = () => composeSignedMessage(message, bodies, { ...base, tracking });
  const untracked = () => composeSignedMessage(message, bodies, base);
  for (let round = 0; round < warmUps; round++) {
    await tracked();
    await untracked();
  }
  const compose = await sideBySide(rounds, tracked, untracked);
  process.stdout.write(`${JSON.stringify({ ...compose, htmlBytes: html.length })}\n`);
}

if (import.meta.main) await main(Number(process.argv[2] ?? 10));
