import { httpConfig } from '../config/http.ts';
import * as table from '../table/gateway.ts';
import { keys } from '../table/keys.ts';
import {
  type BudgetCharge,
  type BudgetPolicy,
  type BudgetStep,
  budgetDecision,
  planCharge,
  stepFor,
} from './message-budget.ts';
import type { BucketDecision } from './token-bucket.ts';

/**
 * The account-wide message budget of batches (docs/decisions/0005-account-message-budget.md; the arithmetic in
 * shared/platform/rate-limit/message-budget.ts): one item per account (`RATE#<account>`, attributes `tat` and
 * `expires_at`), charged with one conditional UpdateItem per batch request whatever its size, so
 * every function instance draws from the same budget.
 *
 * Which of the two writes comes first is a guess from the `tat` this instance last saw for the
 * account (an account sending batches back to back is usually in debt); a wrong guess costs one
 * more write, whose failed condition returns the item and so names the right one. `tat` never
 * decreases while the item exists, and the item is removed (TTL) only an hour after its bucket is
 * full again, so a `tat` seen beyond this charge's `admitUntil` refuses without a write.
 */
const lastSeen = new Map<string, number>();
/** Accounts whose last `tat` an instance keeps (the oldest entry goes first). */
const maxLastSeen = 10_000;

function remember(account: string, tat: number | undefined): void {
  if (tat === undefined) {
    lastSeen.delete(account);
    return;
  }
  if (!lastSeen.has(account) && lastSeen.size >= maxLastSeen) {
    const oldest = lastSeen.keys().next();
    if (!oldest.done) lastSeen.delete(oldest.value);
  }
  lastSeen.set(account, tat);
}

type Outcome = { applied: true; tat: number } | { applied: false; tat: number | undefined };

/** One conditional write of a step; when its condition fails, the `tat` it found (none: no item). */
async function write(account: string, charge: BudgetCharge, step: 'fresh' | 'debt'): Promise<Outcome> {
  const fresh = step === 'fresh';
  const result = await table.update({
    Key: keys.messageBudget(account),
    UpdateExpression: fresh
      ? 'SET #tat = :tat, #expires = :expires'
      : 'SET #expires = :expires ADD #tat :cost',
    ConditionExpression: fresh
      ? 'attribute_not_exists(#tat) OR #tat <= :clock'
      : '#tat > :clock AND #tat <= :admitUntil',
    ExpressionAttributeNames: { '#tat': 'tat', '#expires': 'expires_at' },
    ExpressionAttributeValues: fresh
      ? { ':tat': charge.clock + charge.cost, ':clock': charge.clock, ':expires': charge.expiresAt }
      : {
          ':cost': charge.cost,
          ':clock': charge.clock,
          ':admitUntil': charge.admitUntil,
          ':expires': charge.expiresAt,
        },
    ReturnValues: 'UPDATED_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (result.outcome === 'applied') return { applied: true, tat: Number(result.attributes?.tat) };
  // The item as the condition found it (none: no item).
  const stored = result.item?.tat;
  return { applied: false, tat: typeof stored === 'number' ? stored : undefined };
}

/** The most writes one charge can need: a wrong guess, then the right write, raced once. */
const maxWrites = 3;

/**
 * Charges `messages` messages to the account's budget when it holds a whole token (into debt if
 * need be), or refuses: the answer in the shape of the per-instance buckets', for the same
 * RateLimit-* and Retry-After headers. Nothing is written when it refuses on what it read.
 */
export async function chargeMessageBudget(
  account: string,
  messages: number,
  options: { policy?: BudgetPolicy; nowMs?: number } = {},
): Promise<BucketDecision> {
  const policy = options.policy ?? { rate: httpConfig.rateLimitRps, burst: httpConfig.rateLimitBurst };
  const charge = planCharge(policy, messages, options.nowMs ?? Date.now());
  let tat = lastSeen.get(account);
  let step: BudgetStep = stepFor(charge, tat);
  for (let writes = 0; writes < maxWrites && step !== 'refused'; writes++) {
    const outcome = await write(account, charge, step);
    remember(account, outcome.tat);
    if (outcome.applied) return budgetDecision(charge, outcome.tat, true);
    tat = outcome.tat;
    step = stepFor(charge, tat);
  }
  // Refused on the `tat` read (or, after writes raced every time, on the last one seen).
  return budgetDecision(charge, tat ?? charge.admitUntil, false);
}
