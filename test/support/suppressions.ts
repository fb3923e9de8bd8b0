import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EventBridgeEvent } from 'aws-lambda';
import { vi } from 'vitest';
import { type CallOptions, call, hostInfo } from './host.ts';
import type { TestAccount } from './messages.ts';

/** One call to a suppression route with the account's token (every scope unless given another). */
export async function suppressionCall(
  who: Pick<TestAccount, 'token'>,
  action: 'query' | 'add' | 'delete',
  body: unknown,
  options: Omit<CallOptions, 'token' | 'body'> = {},
) {
  return call('POST', `/suppression/${action}-1.0`, { token: who.token, body, ...options });
}

/** The account's entry for one address (null when not listed), through the API. */
export async function lookup(who: Pick<TestAccount, 'token'>, email: string) {
  const response = await suppressionCall(who, 'query', { email });
  if (response.status !== 200) throw new Error(`query failed: ${response.status} ${response.text}`);
  return response.body.data.suppression as Record<string, any> | null;
}

/** Polls the list until `email` is on it (or fails after `timeoutMs`). */
export async function waitForSuppression(
  who: Pick<TestAccount, 'token'>,
  email: string,
  timeoutMs = 60_000,
): Promise<Record<string, any>> {
  return vi.waitFor(
    async () => {
      const entry = await lookup(who, email);
      if (entry === null) throw new Error(`${email} was not suppressed within ${timeoutMs} ms`);
      return entry;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}

/** Recipients the local MTA refused (550) for one message: outbox/refusals.jsonl. */
export function smtpRefusals(uuid: string): string[] {
  const file = join(hostInfo().dataDir, 'outbox', 'refusals.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes(uuid))
    .map((line) => JSON.parse(line) as { message_uuid: string | null; recipient: string })
    .filter((entry) => entry.message_uuid === uuid)
    .map((entry) => entry.recipient);
}

/** The recipients of every SMTP transaction the local MTA accepted, by message (lower-cased). */
export function smtpRecipientsByMessage(dataDir: string): Map<string, string[]> {
  const recipients = new Map<string, string[]>();
  const file = join(dataDir, 'outbox', 'transactions.jsonl');
  if (!existsSync(file)) return recipients;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as { message_uuid: string; recipients: string[] };
    const list = recipients.get(entry.message_uuid) ?? [];
    list.push(...entry.recipients.map((email) => email.toLowerCase()));
    recipients.set(entry.message_uuid, list);
  }
  return recipients;
}

/** A recorded SES event (test/fixtures/ses/<name>) re-addressed to a message and to `email`. */
export function sesEvent(name: string, uuid: string, email: string): EventBridgeEvent<string, unknown> {
  const event = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'ses', name), 'utf8'));
  event.detail.mail.tags.message_uuid = [uuid];
  event.detail.mail.destination = [email];
  if (event.detail.bounce !== undefined) event.detail.bounce.bouncedRecipients[0].emailAddress = email;
  if (event.detail.complaint !== undefined)
    event.detail.complaint.complainedRecipients[0].emailAddress = email;
  return event;
}
