import { randomUUID } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { authenticate } from 'mailauth';
import { vi } from 'vitest';
import type { Recipient } from '../../shared/delivery/model/status.ts';
import {
  type DeliveryMessage,
  dueAtIso,
  getDeliveryMessage,
} from '../../shared/delivery/store/message-delivery.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { firstWatchAt } from '../../shared/messages/config.ts';
import { planContent } from '../../shared/messages/model/message.ts';
import { messageIndexAttributes } from '../../shared/messages/store/message-index.ts';
import { encodeState } from '../../shared/messages/store/message-state.ts';
import { dynamo, s3 } from '../../shared/platform/aws/clients.ts';
import { bucketName, tableName } from '../../shared/platform/config/storage.ts';
import { keys, workShardOf } from '../../shared/platform/table/keys.ts';
import { publishTxt, testDnsServer } from './dns.ts';
import { call, hostInfo, mintToken, uniqueAccount, uniqueDomain } from './host.ts';

/**
 * Arranges messages exactly as docs/data-model.md stores them (item + S3 parts), for tests of the
 * delivery pipeline that must inject states the API cannot produce on purpose (a write whose
 * enqueue never happened, a claim that was abandoned, missing parts).
 */
export interface TestMessageOptions {
  account: string;
  domain: string;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  kind?: 'text_only' | 'html_only' | 'mixed' | 'eml';
  eml?: string;
  attachments?: Array<{ filename: string; content_type: string; content: Buffer }>;
  status?: 'queued' | 'scheduled' | 'waiting' | 'processing' | 'sent';
  sendAt?: Date;
  /** The due time; for `waiting`, the end of the hold (without it, a waiting message has no due entry). */
  dueAtMs?: number;
  leaseUntil?: number;
  /** Send attempts already made (claims of the message). */
  attempts?: number;
  /** Leave out the S3 objects (a poison message). */
  withoutParts?: boolean;
  subject?: string;
  /** The message's own tracking (`tracking` on add): a tracked message goes out one copy per recipient. */
  tracking?: { opens: boolean; clicks: boolean };
}

export async function putTestMessage(options: TestMessageOptions): Promise<string> {
  const uuid = randomUUID();
  const now = new Date();
  const kind = options.kind ?? 'text_only';
  // One content object per message, laid out by the same code as the messages API, but always in
  // S3 (never inline), so a test can leave it out (a poison message).
  const planned = planContent(uuid, {
    ...(kind === 'text_only' || kind === 'mixed' ? { text: `Hello from ${uuid}\nSecond line.\n` } : {}),
    ...(kind === 'html_only' || kind === 'mixed' ? { html: `<p>Hello from <b>${uuid}</b></p>` } : {}),
    ...(kind === 'eml' ? { eml: Buffer.from(options.eml ?? '') } : {}),
    attachments: (options.attachments ?? []).map((attachment) => ({
      filename: attachment.filename,
      content_type: attachment.content_type,
      body: attachment.content,
    })),
    forceObject: true,
  });
  const content = planned.content;
  const attachments = planned.attachments;
  if (options.withoutParts !== true && content.store === 's3' && planned.object !== undefined) {
    await s3().send(new PutObjectCommand({ Bucket: bucketName(), Key: content.key, Body: planned.object }));
  }
  const sender = `sender@${options.domain}`;
  const address = (email: string) => ({ email });
  const recipients: Recipient[] = (['to', 'cc', 'bcc'] as const).flatMap((kindOf) =>
    (options[kindOf] ?? []).map((email) => ({
      email,
      kind: kindOf,
      status: 'pending' as const,
      updated_at: now.toISOString(),
    })),
  );
  const status = options.status ?? 'queued';
  const createdAt = now.toISOString();
  // A held (`waiting`) message is on a due entry only when the test gives its hold's end.
  const holdEnd =
    status === 'waiting' && options.dueAtMs !== undefined ? dueAtIso(options.dueAtMs) : undefined;
  const dueAtMs =
    options.dueAtMs ??
    (status === 'scheduled' ? (options.sendAt as Date).getTime() : now.getTime() + 300_000);
  await dynamo().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.message(uuid),
        message_uuid: uuid,
        account_id: options.account,
        tenant: options.domain,
        message_sender: sender,
        from: [{ email: sender, name: 'Test Sender' }],
        to: (options.to ?? []).map(address),
        cc: (options.cc ?? []).map(address),
        bcc: (options.bcc ?? []).map(address),
        reply_to: [{ email: `replies@${options.domain}` }],
        subject: options.subject ?? `Test ${uuid}`,
        content_kind: kind,
        headers: { 'X-Campaign': 'delivery-tests' },
        ...(options.tracking === undefined ? {} : { tracking: options.tracking }),
        content,
        attachments,
        scheduling:
          status === 'scheduled'
            ? { mode: 'scheduled', send_at: options.sendAt?.toISOString() }
            : { mode: 'immediate' },
        status,
        // The recipients and history as the service stores them: compressed (message-state.ts).
        st: encodeState({ recipients, history: [{ status, at: createdAt }] }),
        created_at: createdAt,
        updated_at: createdAt,
        attempts: options.attempts ?? 0,
        ...(options.leaseUntil === undefined ? {} : { lease_until: options.leaseUntil }),
        ...messageIndexAttributes({
          message_uuid: uuid,
          account_id: options.account,
          created_at: createdAt,
          status,
          // As the service watches a message it writes now; a test that sets the due time or the
          // lease earlier is watched from then (but never behind the dispatcher's window).
          watch_at: new Date(
            Math.max(
              now.getTime(),
              Math.min(Date.parse(firstWatchAt(now.getTime())), dueAtMs, options.leaseUntil ?? Infinity),
            ),
          ).toISOString(),
          ...(options.sendAt === undefined ? {} : { send_at: options.sendAt.toISOString() }),
          ...(holdEnd === undefined ? {} : { due_at: holdEnd }),
        }),
        ...(status === 'sent' || (status === 'waiting' && holdEnd === undefined)
          ? {}
          : { due_at: dueAtIso(dueAtMs) }),
      },
    }),
  );
  return uuid;
}

/** The time of a message item's work-index entry (gsi3: its watch time, or a held message's due time). */
export const workEntryTimeOf = (item: Record<string, unknown> | undefined): number =>
  Date.parse(String(item?.gsi3sk).split('#')[0] as string);

/** Moves a message's watch entry to `atMs` (on `shard`), as if it had been written so. */
export async function watchAt(uuid: string, atMs: number, shard = workShardOf(uuid)): Promise<void> {
  await dynamo().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.message(uuid),
      UpdateExpression: 'SET gsi3pk = :pk, gsi3sk = :sk',
      ExpressionAttributeValues: { ':pk': keys.watch(shard), ':sk': `${dueAtIso(atMs)}#${uuid}` },
    }),
  );
}

/** Polls the stored message until `done` holds, or fails after `timeoutMs` (generous: a loaded host). */
export async function waitForMessage(
  uuid: string,
  done: (message: DeliveryMessage) => boolean,
  timeoutMs = 120_000,
): Promise<DeliveryMessage> {
  return vi.waitFor(
    async () => {
      const last = await getDeliveryMessage(uuid);
      if (last === undefined || !done(last))
        throw new Error(`message ${uuid} did not reach the expected state; last status ${last?.status}`);
      return last;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}

export const isSettled = (message: DeliveryMessage) =>
  ['delivered', 'bounced', 'failed', 'cancelled'].includes(message.status);

export function outboxDir(): string {
  return join(hostInfo().dataDir, 'outbox');
}

export function outboxEml(uuid: string): Buffer | undefined {
  const file = join(outboxDir(), `${uuid}.eml`);
  return existsSync(file) ? readFileSync(file) : undefined;
}

/** The envelope the local recipient MTA recorded beside the message (`<uuid>.envelope.json`). */
export function outboxEnvelope(
  uuid: string,
): { message_uuid: string; mail_from: string | null; recipients: string[] } | undefined {
  const file = join(outboxDir(), `${uuid}.envelope.json`);
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

/** SMTP transactions the local recipient MTA saw for one message. */
export function smtpTransactions(uuid: string): Array<{ recipients: string[] }> {
  const file = join(outboxDir(), 'transactions.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.includes(uuid))
    .map((line) => JSON.parse(line) as { message_uuid: string; recipients: string[] })
    .filter((entry) => entry.message_uuid === uuid);
}

// ---- Through the API -------------------------------------------------------------------------

export interface SendingDomain {
  account: string;
  domain: string;
  token: string;
  selector: string;
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
}

/**
 * A fresh account and domain whose active DKIM key uses `algorithm`, with the key's TXT record (as
 * GET /domain/dkim/status-1.0 publishes it) served by the test DNS server.
 */
export async function sendingDomain(algorithm: 'rsa-sha256' | 'ed25519-sha256'): Promise<SendingDomain> {
  const account = uniqueAccount('dlv');
  const domain = uniqueDomain('dlv');
  await registerDomain(domain, account);
  const token = await mintToken({ account });
  const status = await call('GET', '/domain/dkim/status-1.0', { token, query: { domain } });
  if (status.body?.data?.svc_config?.dkim_algorithm !== algorithm) {
    const set = await call('POST', '/domain/dkim/set-algorithm-1.0', { token, body: { domain, algorithm } });
    if (set.status !== 200) throw new Error(`set-algorithm failed: ${set.text}`);
  }
  const after = await call('GET', '/domain/dkim/status-1.0', { token, query: { domain } });
  // Every active record: an Ed25519 domain also signs with its RSA companion key.
  const actives = (after.body.data.dkim_keys as Array<Record<string, any>>).filter(
    (key) => key.status === 'active',
  );
  const active = actives.find((key) => key.selector === after.body.data.svc_config?.dkim_selector);
  if (active === undefined) throw new Error(`no active key: ${after.text}`);
  for (const key of actives) publishTxt(key.dns_name, [key.dns_value_chunks ?? [key.dns_value]]);
  return { account, domain, token, selector: active.selector, algorithm };
}

export async function addMessage(
  token: string,
  body: Record<string, unknown>,
): Promise<{ uuid: string; status: string }> {
  const response = await call('POST', '/message/add-1.0', { token, body });
  if (response.status !== 200) throw new Error(`add failed: ${response.status} ${response.text}`);
  return { uuid: response.body.data.message_uuid, status: response.body.data.status };
}

export async function queryMessage(token: string, uuid: string): Promise<Record<string, any>> {
  const response = await call('POST', '/message/query-1.0', { token, body: { message_uuid: uuid } });
  if (response.status !== 200) throw new Error(`query failed: ${response.status} ${response.text}`);
  return response.body.data;
}

/** Polls the query endpoint until the message reaches one of `statuses` (generous deadline). */
export async function waitForStatus(
  token: string,
  uuid: string,
  statuses: readonly string[],
  timeoutMs = 100_000,
): Promise<Record<string, any>> {
  return vi.waitFor(
    async () => {
      const last = await queryMessage(token, uuid);
      if (!statuses.includes(last.status))
        throw new Error(`message ${uuid} stayed ${last.status}, expected ${statuses.join('/')}`);
      return last;
    },
    { timeout: timeoutMs, interval: 300 },
  );
}

/** DKIM results of a received message, verified by mailauth against the test DNS server. */
export async function verifyDkim(
  raw: Buffer,
): Promise<Array<{ result: string; algorithm?: string; domain?: string }>> {
  const resolver = new Resolver();
  const [host, port] = testDnsServer().split(':');
  resolver.setServers([`${host}:${port}`]);
  const result = await authenticate(raw, {
    ip: '127.0.0.1',
    helo: 'localhost',
    mta: 'mx.local.test',
    sender: 'nobody@invalid.test',
    resolver: async (name: string, type: string) => (await resolver.resolve(name, type)) as string[][],
  });
  return result.dkim.results.map((entry: any) => ({
    result: entry.status.result,
    algorithm: entry.status.header?.a,
    domain: entry.signingDomain,
  }));
}

/** Runs the dispatcher once in this process, against the same emulators (as its schedule would). */
export async function runDispatcher(): Promise<unknown> {
  const { handler } = await import('../../functions/dispatcher/handler.ts');
  return handler({});
}
