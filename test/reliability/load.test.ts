import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { recordFigures } from '../support/figures.ts';
import { type ApiResponse, call, hostInfo, mintToken } from '../support/host.ts';
import { mapLimit, newAccount } from '../support/messages.ts';
import { transactionsByMessage } from '../support/remote-store.ts';
import { smtpRecipientsByMessage } from '../support/suppressions.ts';

/*
 * Load through the shared local host: LOAD_MESSAGES messages (default 500; 5,000 in
 * `npm run test:reliability`) added at concurrency 50, then every one must reach a final status
 * (seen through the query endpoint) with exactly one SMTP transaction at the local MTA
 * (<DATA_DIR>/outbox/transactions.jsonl), and no request may answer a 5xx. The rate limit is
 * per account (RATE_LIMIT_RPS 50, RATE_LIMIT_BURST 100): like a well-behaved client, the test waits
 * for `Retry-After` and sends again when it is answered 115, and counts those answers.
 * Suppressed recipients ride along: one message in 10 also copies an address on the account's
 * suppression list (it must still end delivered, with that address never given to the MTA), and
 * one in 20 goes only to suppressed addresses (it must end suppressed with no SMTP transaction).
 * One message in four goes through POST /message/batch-1.0 instead of add, 50 to a batch (the
 * rate limit counts their messages too), with the same checks: each final, each sent once.
 */
const total = Number(process.env.LOAD_MESSAGES ?? 500);
const concurrency = 50;
const perToken = 50;
const nonFinal = ['queued', 'processing', 'sent', 'scheduled', 'waiting'];
/** Every suppressed address, listed before the load starts. */
const suppressedOnly = (index: number) => index % 20 === 7;
const withSuppressedCopy = (index: number) => index % 10 === 3;
const listedAddress = (index: number) => `suppressed-${index}@example.net`;
/** Messages sent 50 to a batch: every fourth block of 50. */
const batchSize = 50;
const viaBatch = (index: number) => Math.floor(index / batchSize) % 4 === 1;

let limited = 0;

/** One call; a 429 (code 115) is waited out as its Retry-After says, then sent again. */
async function politely(...args: Parameters<typeof call>): Promise<ApiResponse<any>> {
  for (;;) {
    const response = await call(...args);
    if (response.status !== 429) return response;
    limited += 1;
    const seconds = Number(response.headers.get('retry-after') ?? '1');
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, seconds) * 1000));
  }
}

describe('load through the local host', () => {
  it(`${total} messages at concurrency ${concurrency}: each final, each sent exactly once (suppressed ones never), no 5xx`, {
    timeout: 3_600_000,
  }, async () => {
    const who = await newAccount('load');
    const tokens: string[] = [];
    for (let index = 0; index < Math.ceil(total / perToken) + 400; index++)
      tokens.push(await mintToken({ account: who.account, claims: { jti: randomUUID() } }));
    let tokenUse = 0;
    const nextToken = () => tokens[Math.floor(tokenUse++ / perToken) % tokens.length] as string;

    const listed = Array.from({ length: total }, (_, index) => index)
      .filter((index) => suppressedOnly(index) || withSuppressedCopy(index))
      .map(listedAddress);
    for (let start = 0; start < listed.length; start += 1000) {
      const added = await call('POST', '/suppression/add-1.0', {
        token: nextToken(),
        body: { emails: listed.slice(start, start + 1000) },
      });
      assert.equal(added.status, 200, added.text);
    }

    const started = Date.now();
    const statuses = new Map<number, number>();
    const messageBody = (index: number) => ({
      message_sender: who.sender,
      to: suppressedOnly(index) ? [listedAddress(index)] : [`load-${index}@example.net`],
      ...(withSuppressedCopy(index) ? { cc: [listedAddress(index)] } : {}),
      subject: `load ${index}`,
      content: { kind: 'text_only', text: `message ${index}` },
    });
    // One job per message sent with add, one per block of 50 sent as a batch; every message ends
    // with a response of its own shape (the batch's status and its result for that message).
    const jobs: number[][] = [];
    for (let index = 0; index < total; index++) {
      if (!viaBatch(index)) jobs.push([index]);
      else if (index % batchSize === 0) jobs.push([index]);
      else (jobs[jobs.length - 1] as number[]).push(index);
    }
    const perMessage: Array<ApiResponse<any>> = new Array(total);
    let batchRequests = 0;
    await mapLimit(jobs, concurrency, async (job) => {
      const first = job[0] as number;
      if (!viaBatch(first)) {
        const response = await politely('POST', '/message/add-1.0', {
          token: nextToken(),
          body: messageBody(first),
        });
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        perMessage[first] = response;
        return;
      }
      batchRequests += 1;
      const response = await politely('POST', '/message/batch-1.0', {
        token: nextToken(),
        body: { messages: job.map(messageBody) },
      });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      job.forEach((index, position) => {
        perMessage[index] = { ...response, body: { data: response.body?.data?.results?.[position] ?? null } };
      });
    });
    const responses = perMessage;
    const addSeconds = (Date.now() - started) / 1000;
    const serverErrors = responses.filter((response) => response.status >= 500).length;
    assert.equal(serverErrors, 0, `5xx answers: ${JSON.stringify([...statuses])}`);
    for (const response of responses) assert.equal(response.status, 200, response.text);
    const uuids = new Set(responses.map((response) => response.body.data.message_uuid as string));
    assert.equal(uuids.size, total);
    const expectSuppressed = new Set(
      responses
        .filter((_, index) => suppressedOnly(index))
        .map((response) => response.body.data.message_uuid),
    );

    // Wait (through the query endpoint) until none of this account's messages is still on its way.
    const deadline = Date.now() + Math.max(600_000, total * 300);
    for (;;) {
      const pending = await politely('POST', '/message/query-1.0', {
        token: nextToken(),
        body: { filters: { status: nonFinal, limit: 1 } },
      });
      assert.equal(pending.status, 200, pending.text);
      if (pending.body.data.count === 0) break;
      if (Date.now() > deadline) assert.fail('messages did not all reach a final status in time');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    const settledSeconds = (Date.now() - started) / 1000;

    // Every message, page by page through the query endpoint, with its final status.
    const final = new Map<string, string>();
    let cursor: string | null = null;
    let queries = 0;
    do {
      const page: ApiResponse<any> = await politely('POST', '/message/query-1.0', {
        token: nextToken(),
        body: { filters: { limit: 1000 }, ...(cursor === null ? {} : { cursor }) },
      });
      queries += 1;
      assert.equal(page.status, 200, page.text);
      for (const entry of page.body.data.messages) final.set(entry.message_uuid, entry.status);
      cursor = page.body.data.next_cursor;
    } while (cursor !== null);

    const sent = transactionsByMessage(hostInfo().dataDir);
    const smtpRecipients = smtpRecipientsByMessage(hostInfo().dataDir);
    const listedSet = new Set(listed);
    let lost = 0;
    let duplicates = 0;
    let delivered = 0;
    let suppressed = 0;
    let sentToListed = 0;
    for (const uuid of uuids) {
      const status = final.get(uuid);
      if (status === 'delivered') delivered += 1;
      if (status === 'suppressed') suppressed += 1;
      const count = sent.get(uuid) ?? 0;
      sentToListed += (smtpRecipients.get(uuid) ?? []).filter((email) => listedSet.has(email)).length;
      if (expectSuppressed.has(uuid)) {
        // Never sent: a transaction would be a suppressed address reached; status other than
        // suppressed would be a message lost or stuck.
        if (status !== 'suppressed') lost += 1;
        duplicates += count;
        continue;
      }
      if (count === 0) lost += 1;
      if (count > 1) duplicates += count - 1;
    }
    recordFigures('load', {
      messages: total,
      concurrency,
      add_requests: jobs.length - batchRequests,
      batch_requests: batchRequests,
      messages_via_batch: Array.from({ length: total }, (_, index) => index).filter(viaBatch).length,
      add_5xx: serverErrors,
      add_non_200: responses.filter((response) => response.status !== 200).length,
      rate_limited_115_then_retried: limited,
      delivered,
      suppressed,
      suppressed_recipients: listed.length,
      sent_to_suppressed: sentToListed,
      lost,
      duplicates,
      add_seconds: Math.round(addSeconds),
      all_final_seconds: Math.round(settledSeconds),
      query_pages: queries,
    });
    assert.equal(final.size, total, 'the query lists every message');
    assert.equal(delivered, total - expectSuppressed.size);
    assert.equal(suppressed, expectSuppressed.size);
    assert.equal(sentToListed, 0, 'no suppressed address reached the MTA');
    assert.equal(lost, 0);
    assert.equal(duplicates, 0);

    // The statistics (counted from the table stream) end equal to those final statuses: each
    // delivered message has one delivered recipient, each suppressed one a suppressed recipient, and
    // every delivered message that copied a listed address one suppressed recipient more.
    const copies = responses.filter(
      (response, index) =>
        withSuppressedCopy(index) && final.get(response.body.data.message_uuid) === 'delivered',
    ).length;
    const expectedStats = {
      accepted: total,
      sent: delivered,
      delivered,
      bounced: 0,
      complained: 0,
      suppressed: suppressed + copies,
      failed: 0,
      unsubscribed: 0,
    };
    const statsRange = {
      date_from: new Date(started - 86_400_000).toISOString(),
      date_to: new Date(Date.now() + 3_600_000).toISOString(),
      granularity: 'day',
    };
    const statsDeadline = Date.now() + 600_000;
    let stats: ApiResponse<any>;
    for (;;) {
      stats = await politely('POST', '/stats/query-1.0', { token: nextToken(), body: statsRange });
      assert.equal(stats.status, 200, stats.text);
      const { bounce_rate: _bounce, complaint_rate: _complaint, ...counts } = stats.body.data.totals;
      if (Object.entries(expectedStats).every(([name, value]) => counts[name] === value)) break;
      if (Date.now() > statsDeadline)
        assert.deepEqual(counts, expectedStats, 'the statistics did not reach the final statuses');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    recordFigures('load: statistics equal to the final statuses', expectedStats);
  });
});
