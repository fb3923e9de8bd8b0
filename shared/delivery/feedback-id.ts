import { serviceKey } from '../platform/table/service-keys.ts';
import { accountTag } from './mail/envelope.ts';

/**
 * The opaque account tag of the Feedback-ID header (docs/deliverability.md, "Feedback-ID"): the
 * deployment's key is read once per process (created on first use), tags are computed in memory.
 */
let key: Promise<Buffer> | undefined;

export async function feedbackTagOf(accountId: string): Promise<string> {
  key ??= serviceKey('feedback-id').catch((error: unknown) => {
    key = undefined;
    throw error;
  });
  return accountTag(await key, accountId);
}
