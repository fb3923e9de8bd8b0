import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { recordFigures } from '../support/figures.ts';
import {
  type ApiResponse,
  call,
  hasNoInternals,
  mintToken,
  uniqueAccount,
  uniqueDomain,
} from '../support/host.ts';
import { mapLimit } from '../support/messages.ts';
import { type OutageProxy, startOutageProxy } from '../support/outage-proxy.ts';
import {
  partKeys,
  type RemoteStore,
  registerDomainOn,
  remoteStore,
  transactionsByMessage,
} from '../support/remote-store.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/*
 * Store outages with recovery, on secondary host C. Its handlers and workers reach DynamoDB, SQS and
 * S3 through three outage proxies (test/support/outage-proxy.ts) that this test stops and starts on
 * the same port: while stopped the store refuses connections and open ones are cut, as when the
 * emulator is stopped; the emulator keeps its data meanwhile, as an AWS store does through an outage
 * (restarting in-memory DynamoDB Local would lose everything, which no real outage does; a killed
 * emulator is covered by test/integration/faults.test.ts, code 4). The dispatcher runs every 2 s and
 * re-enqueues unclaimed queued messages after 3 s, and a lease lasts 10 s, so recovery takes
 * seconds, not minutes. FAULT_MESSAGES (default 60; 150 in `npm run test:reliability`) sets the
 * number of requests of the DynamoDB run; the SQS and S3 runs use a third and a sixth of it.
 */
const faultRuns = Number(process.env.FAULT_MESSAGES ?? 60);

let host: SecondaryHost;
let store: RemoteStore;
const proxies: Record<'dynamo' | 'sqs' | 's3', OutageProxy> = {} as never;
const account = uniqueAccount('outage');
const domain = uniqueDomain('outage');
let token = '';

const message = (label: string, attachment = false) => ({
  message_sender: `app@${domain}`,
  to: [`rcpt-${label}@example.net`],
  subject: `outage ${label}`,
  content: { kind: 'mixed', text: `text ${label}`, html: `<p>${label}</p>` },
  ...(attachment
    ? {
        attachments: [
          { filename: 'a.txt', content_type: 'text/plain', content: Buffer.from(label).toString('base64') },
        ],
      }
    : {}),
});

const add = (body: unknown) => call('POST', '/message/add-1.0', { baseUrl: host.url, token, body });

function assertUnavailable(response: ApiResponse<any>, store: string): void {
  assert.equal(response.status, 503, response.text);
  assert.equal(response.body.error.code, 4, response.text);
  assert.match(response.body.error.message, new RegExp(store));
  assert.ok(hasNoInternals(response.text), response.text);
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const finalStatuses = new Set(['delivered', 'bounced', 'failed', 'cancelled']);

/** Waits until every uuid is delivered; returns how many SMTP transactions each had. */
async function deliveredOnce(uuids: readonly string[]): Promise<{ lost: number; duplicates: number }> {
  await until(async () => {
    const items = await Promise.all(uuids.map((uuid) => store.message(uuid)));
    return items.every((item) => item !== undefined && finalStatuses.has(item.status));
  }, `${uuids.length} messages to settle`);
  const sent = transactionsByMessage(host.dataDir);
  let lost = 0;
  let duplicates = 0;
  for (const uuid of uuids) {
    const item = await store.message(uuid);
    assert.equal(item?.status, 'delivered', `${uuid}: ${item?.status}`);
    const count = sent.get(uuid) ?? 0;
    if (count === 0) lost += 1;
    if (count > 1) duplicates += count - 1;
  }
  return { lost, duplicates };
}

/** No message item whose content is missing: a message either exists whole, or not at all. */
async function assertNothingHalfWritten(): Promise<number> {
  const items = await store.messagesOf(account);
  for (const item of items) {
    for (const key of partKeys(item)) {
      assert.ok(await store.objectExists(key), `message ${item.message_uuid} lacks ${key}`);
    }
  }
  return items.length;
}

beforeAll(async () => {
  proxies.dynamo = await startOutageProxy();
  proxies.sqs = await startOutageProxy();
  proxies.s3 = await startOutageProxy();
  host = await startSecondaryHost({
    AWS_ENDPOINT_URL_DYNAMODB: proxies.dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: proxies.sqs.endpoint,
    AWS_ENDPOINT_URL_S3: proxies.s3.endpoint,
    RATE_LIMIT_BURST: '100000',
    RATE_LIMIT_RPS: '100000',
    DISPATCHER_INTERVAL_SECONDS: '2',
    RECONCILE_AFTER_SECONDS: '3',
    RETRY_TAKEOVER_SECONDS: '3',
    // A claim cut off by the outage holds its message until the lease ends (120 s by default).
    SEND_LEASE_SECONDS: '10',
    SMTP_FINAL_HOP: 'true',
  });
  proxies.dynamo.setTarget(host.dynamo.endpoint);
  proxies.sqs.setTarget(host.sqsS3.endpoint);
  proxies.s3.setTarget(host.sqsS3.endpoint);
  store = remoteStore(host);
  await registerDomainOn(host, domain, account);
  token = await mintToken({ account, signer: host });
});

afterAll(async () => {
  store?.close();
  await host?.stop();
  await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
});

describe('store outages with recovery (secondary host C)', () => {
  it('SQS unavailable at add time: every message is accepted as queued and sent once when the queue returns', async () => {
    await proxies.sqs.stop();
    const count = Math.max(10, Math.round(faultRuns / 3));
    const responses = await mapLimit(Array.from({ length: count }), 10, (_, index) =>
      add(message(`sqs-${index}`)),
    );
    for (const response of responses) {
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.data.status, 'queued');
    }
    const uuids = responses.map((response) => response.body.data.message_uuid as string);
    // Nothing can have been sent while the queue is away.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    assert.equal(uuids.filter((uuid) => transactionsByMessage(host.dataDir).has(uuid)).length, 0);
    for (const uuid of uuids) assert.equal((await store.message(uuid))?.status, 'queued');
    await proxies.sqs.start();
    const { lost, duplicates } = await deliveredOnce(uuids);
    assert.equal(lost, 0);
    assert.equal(duplicates, 0);
    recordFigures('faults: SQS unavailable at add time', {
      requests: count,
      accepted: responses.filter((response) => response.status === 200).length,
      failures: responses.filter((response) => response.status >= 500).length,
      lost,
      duplicates,
    });
  });

  it('S3 unavailable: a clear 503 (code 4), no message item without its content, and recovery when it returns', async () => {
    await proxies.s3.stop();
    const count = Math.max(5, Math.round(faultRuns / 6));
    const refused = await mapLimit(Array.from({ length: count }), 5, (_, index) =>
      add(message(`s3-${index}`, true)),
    );
    for (const response of refused) assertUnavailable(response, 'object storage');
    const subjects = new Set(refused.map((_, index) => `outage s3-${index}`));
    const written = (await store.messagesOf(account)).filter((item) => subjects.has(item.subject));
    assert.equal(written.length, 0, 'no message item for a request whose parts could not be stored');
    await proxies.s3.start();
    const recovered = await add(message('s3-after', true));
    assert.equal(recovered.status, 200, recovered.text);
    const { lost, duplicates } = await deliveredOnce([recovered.body.data.message_uuid]);
    assert.equal(lost, 0);
    await assertNothingHalfWritten();
    recordFigures('faults: S3 unavailable', {
      requests: count + 1,
      refused_503_code_4: refused.length,
      items_written_while_down: written.length,
      recovered: 1,
      lost,
      duplicates,
    });
  });

  it('DynamoDB hanging (accepts connections, never answers): 503 code 4 after the SDK timeouts, not a hung request', async () => {
    proxies.dynamo.hang();
    const started = Date.now();
    const responses = await mapLimit(Array.from({ length: 4 }), 4, (_, index) =>
      add(message(`hang-${index}`)),
    );
    const seconds = (Date.now() - started) / 1000;
    for (const response of responses) assertUnavailable(response, 'database');
    await proxies.dynamo.start();
    const recovered = await add(message('hang-after'));
    assert.equal(recovered.status, 200, recovered.text);
    const { lost, duplicates } = await deliveredOnce([recovered.body.data.message_uuid]);
    recordFigures('faults: DynamoDB hanging', {
      requests: responses.length + 1,
      refused_503_code_4: responses.length,
      longest_answer_seconds: Math.round(seconds),
      recovered: 1,
      lost,
      duplicates,
    });
  });

  it('DynamoDB stopped mid-run: 503 code 4 while down, service recovers when it returns, nothing half-written, nothing lost', async () => {
    const total = faultRuns;
    const stopAfter = Math.round(total / 3);
    const startAfter = Math.round((2 * total) / 3);
    let done = 0;
    let outage: Promise<void> | undefined;
    const outcomes = await mapLimit(Array.from({ length: total }), 10, async (_, index) => {
      // Requests are in flight when the store goes away and when it comes back.
      if (index === stopAfter) outage = proxies.dynamo.stop();
      if (index === startAfter) {
        await outage;
        // Keep it down long enough for the requests in between to see the outage.
        while (done < startAfter - 5) await new Promise((resolve) => setTimeout(resolve, 50));
        await proxies.dynamo.start();
      }
      const response = await add(message(`db-${index}`, index % 2 === 0));
      done += 1;
      return response;
    });
    let accepted = 0;
    let unavailable = 0;
    for (const response of outcomes) {
      if (response.status === 200) accepted += 1;
      else {
        assertUnavailable(response, 'database');
        unavailable += 1;
      }
    }
    assert.ok(unavailable > 0, 'the outage was seen');
    // After recovery, the service answers normally again without a restart.
    const after = await mapLimit(Array.from({ length: 10 }), 5, (_, index) =>
      add(message(`db-after-${index}`)),
    );
    for (const response of after) assert.equal(response.status, 200, response.text);

    const acceptedUuids = [...outcomes, ...after]
      .filter((response) => response.status === 200)
      .map((response) => response.body.data.message_uuid as string);
    const { lost, duplicates } = await deliveredOnce(acceptedUuids);
    assert.equal(lost, 0);
    assert.equal(duplicates, 0);
    // A 503 can still hide a committed write (the connection broke after the commit): such a
    // message is whole and sent, never half-written. Count them.
    const subjects = new Map(outcomes.map((response, index) => [`outage db-${index}`, response]));
    const ambiguous = (await store.messagesOf(account)).filter(
      (item) => subjects.get(item.subject)?.status === 503,
    );
    if (ambiguous.length > 0) await deliveredOnce(ambiguous.map((item) => item.message_uuid as string));
    await assertNothingHalfWritten();
    recordFigures('faults: DynamoDB stopped mid-run', {
      requests: total + after.length,
      accepted: accepted + after.length,
      refused_503_code_4: unavailable,
      committed_despite_503: ambiguous.length,
      other_failures: 0,
      lost,
      duplicates,
    });
  });
});
