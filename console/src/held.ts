import { api, dataOf } from './api.ts';
import type { MessageStatus } from './types.ts';

/**
 * Held mail: a `waiting` or `scheduled` message can be released (manual-send); one that is also
 * only `queued` can still be cancelled (manual-cancel). Both are POST /message/add-1.0 with the
 * message's id, as the API defines them; the Message page and Activity's bulk actions use this.
 */
export type HeldAction = 'manual-send' | 'manual-cancel';

const releasable: ReadonlySet<string> = new Set<MessageStatus>(['waiting', 'scheduled']);
const cancellable: ReadonlySet<string> = new Set<MessageStatus>(['waiting', 'scheduled', 'queued']);

export function canRelease(status: string): boolean {
  return releasable.has(status);
}

export function canCancel(status: string): boolean {
  return cancellable.has(status);
}

/** Releases or cancels one message; answers its new status. */
export async function actOnHeld(uuid: string, action: HeldAction): Promise<string> {
  const result = await dataOf(
    api().POST('/message/add-1.0', { body: { scheduling: { mode: action, message_uuid: uuid } } }),
  );
  return result.status;
}
