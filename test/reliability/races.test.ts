import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { smtpTransactions, waitForMessage } from '../support/delivery.ts';
import { recordFigures } from '../support/figures.ts';
import { mintToken } from '../support/host.ts';
import { add, created, mapLimit, newAccount, type TestAccount } from '../support/messages.ts';

/*
 * Races on one held message through the shared host. (Deletes interleaved with claims and
 * concurrent identical Idempotency-Key requests are in test/integration/messages-delete.test.ts and
 * messages-add.test.ts.) RACE_ROUNDS messages (default 5; 20 in `npm run test:reliability`), each
 * released by 10 concurrent manual-send requests: one wins, the others are 111, and the message is
 * one SMTP transaction.
 */
const rounds = Number(process.env.RACE_ROUNDS ?? 5);
const racers = 10;
const held = { scheduling: { mode: 'manual-wait' } };

/** The same account with a fresh token (the rate limit is per account: each round has its own). */
async function freshToken(who: TestAccount): Promise<TestAccount> {
  return { ...who, token: await mintToken({ account: who.account, claims: { jti: randomUUID() } }) };
}

describe('races on a held message', () => {
  it(`${racers} concurrent manual-send of one waiting message: one wins, sent exactly once (${rounds} rounds)`, async () => {
    // One account per round: the rate limit is per account, and each round is one caller's burst.
    const heldMessages = await mapLimit(Array.from({ length: rounds }), 5, async () => {
      const who = await newAccount('race');
      return { who, uuid: await created(who, held) };
    });
    const uuids = heldMessages.map((entry) => entry.uuid);
    let requests = 0;
    let winners = 0;
    let refused = 0;
    await mapLimit(heldMessages, 2, async ({ who, uuid }) => {
      const caller = await freshToken(who);
      const answers = await Promise.all(
        Array.from({ length: racers }, () =>
          add(caller, { scheduling: { mode: 'manual-send', message_uuid: uuid } }),
        ),
      );
      requests += answers.length;
      const won = answers.filter((answer) => answer.status === 200);
      assert.equal(won.length, 1, answers.map((answer) => answer.text).join('\n'));
      assert.deepEqual(won[0]?.body.data, { message_uuid: uuid, status: 'queued' });
      for (const answer of answers.filter((entry) => entry.status !== 200)) {
        assert.equal(answer.body.error.code, 111, answer.text);
      }
      winners += won.length;
      refused += answers.length - won.length;
    });
    let duplicates = 0;
    let lost = 0;
    for (const uuid of uuids) {
      const message = await waitForMessage(uuid, (entry) => entry.status === 'delivered');
      const count = smtpTransactions(uuid).length;
      if (count === 0) lost += 1;
      duplicates += Math.max(0, count - 1);
      assert.equal(message.history.filter((entry) => entry.status === 'queued').length, 1, 'released once');
    }
    recordFigures('races: concurrent manual-send of one held message', {
      messages: rounds,
      requests,
      winners,
      refused_111: refused,
      failures: requests - winners - refused,
      lost,
      duplicates,
    });
    assert.equal(lost, 0);
    assert.equal(duplicates, 0);
  });

  it(`manual-send racing manual-cancel: one send at most, and a cancelled message is never sent (${rounds} rounds)`, async () => {
    const heldMessages = await mapLimit(Array.from({ length: rounds }), 5, async () => {
      const who = await newAccount('race');
      return { who, uuid: await created(who, held) };
    });
    const outcomes = { sent: 0, cancelled: 0 };
    let duplicates = 0;
    let requests = 0;
    await mapLimit(heldMessages, 2, async ({ who, uuid }) => {
      const caller = await freshToken(who);
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, index) =>
          add(caller, {
            scheduling: { mode: index % 2 === 0 ? 'manual-send' : 'manual-cancel', message_uuid: uuid },
          }),
        ),
      );
      requests += answers.length;
      const won = answers.filter((answer) => answer.status === 200);
      // A release can still be cancelled (queued → cancelled) before a sender claims it, so a
      // manual-send may be followed by one manual-cancel; never two of a kind, never cancel then send.
      assert.ok(won.length >= 1 && won.length <= 2, answers.map((answer) => answer.text).join('\n'));
      for (const answer of answers.filter((entry) => entry.status !== 200)) {
        assert.equal(answer.body.error.code, 111, answer.text);
      }
      const message = await waitForMessage(uuid, (entry) =>
        ['delivered', 'cancelled'].includes(entry.status),
      );
      const count = smtpTransactions(uuid).length;
      if (message.status === 'cancelled') {
        assert.equal(count, 0, 'a cancelled message is never sent');
        outcomes.cancelled += 1;
      } else {
        assert.equal(count, 1);
        assert.deepEqual(
          won.map((answer) => answer.body.data.status),
          ['queued'],
        );
        outcomes.sent += 1;
      }
      duplicates += Math.max(0, count - 1);
    });
    recordFigures('races: manual-send vs manual-cancel', {
      messages: rounds,
      requests,
      ended_sent: outcomes.sent,
      ended_cancelled: outcomes.cancelled,
      duplicates,
    });
  });
});
