import { domainOf } from '../platform/mail/addresses.ts';
import { log } from '../platform/observability/log.ts';
import type { MessageStatus } from './model/statuses.ts';
import { listMessages } from './query.ts';
import { transitionMessage } from './store/messages.ts';

/**
 * An account's mail from one domain that has not left yet (docs/domains.md): what deleting the
 * domain cancels, and what a claim that moved the domain to another account fails.
 */
const unsentStatuses: MessageStatus[] = ['queued', 'scheduled', 'waiting'];

export async function listUnsentFrom(account: string, domain: string): Promise<string[]> {
  const uuids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await listMessages(account, { status: unsentStatuses, limit: 100 }, cursor);
    for (const message of page.messages) {
      if (domainOf(message.message_sender).toLowerCase() === domain) uuids.push(message.message_uuid);
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
  return uuids;
}

/** Ends each message that is still unsent in `to` with `detail`; how many it ended. */
export async function endUnsent(
  account: string,
  uuids: readonly string[],
  to: 'cancelled' | 'failed',
  detail: string,
  now = new Date(),
): Promise<number> {
  let ended = 0;
  for (const uuid of uuids) {
    const result = await transitionMessage({
      uuid,
      account,
      from: unsentStatuses,
      to,
      entry: { status: to, at: now.toISOString(), detail },
      dueAt: null,
    });
    if (result.outcome === 'changed') {
      ended += 1;
      log('info', 'message state', { message_uuid: uuid, account, status: to, event: detail });
    }
  }
  return ended;
}

export const domainMovedDetail = 'Not sent: domain moved to another account';
