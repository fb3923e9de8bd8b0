import type { ApiContext } from '../platform/http/api-types.ts';
import { accountBudgetVerdict, chargeMessages } from '../platform/middleware/rate-limit.ts';
import { chargeMessageBudget } from '../platform/rate-limit/message-budget-store.ts';

/**
 * Rate limits count messages (docs/decisions/0005-account-message-budget.md): a batch of `messages` pays one token
 * per message, once the body's list is read (dry runs and replays too), in two places:
 * - the account's budget shared by every function instance (one conditional write per batch): a
 *   batch is admitted while it holds a whole token and may take it into debt; when it does not, the
 *   batch is 115 with `Retry-After`, and nothing more is charged anywhere;
 * - this instance's bucket, which admitted the request with one token and pays here for the others.
 * So concurrent batches through many instances cannot multiply an account's sending rate.
 */
export async function chargeBatch(context: ApiContext, account: string, messages: number): Promise<void> {
  const limited = accountBudgetVerdict(context, await chargeMessageBudget(account, messages));
  if (limited !== undefined) throw limited;
  chargeMessages(context, messages);
}
