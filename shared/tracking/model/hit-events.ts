import { eventIdOf, type MessageChange } from '../../messages/index.ts';
import type { HitItem } from '../store/hits.ts';

/**
 * The event of one committed hit (pure): `message.opened` or `message.clicked` for the recipient,
 * with the hit's facts, `first` when the record had no hit before. Its id is derived from the hit,
 * so a stream record handled twice yields the same event.
 */
export function hitEventOf(before: HitItem | undefined, after: HitItem): MessageChange {
  const type = after.kind === 'open' ? 'message.opened' : 'message.clicked';
  const first = before === undefined || (before.hits ?? 0) === 0;
  return {
    id: eventIdOf([
      after.message_uuid,
      type,
      after.recipient.toLowerCase(),
      after.last.at,
      String(after.hits),
    ]),
    type,
    accountId: after.account_id,
    stream: after.stream ?? 'transactional',
    messageUuid: after.message_uuid,
    at: after.last.at,
    messageStatus: after.status,
    subject: after.subject,
    recipient: { email: after.recipient, status: after.kind === 'open' ? 'opened' : 'clicked', detail: null },
    tags: after.tags ?? [],
    metadata: after.metadata ?? {},
    extra: {
      first,
      user_agent: after.last.user_agent,
      client_address: after.last.client_address,
      machine_open: after.last.machine_open,
      ...(after.kind === 'click'
        ? { link: after.last.link ?? '', link_index: after.last.link_index ?? 0 }
        : {}),
    },
  };
}

/** What one hit adds to statistics: `opened`/`clicked` once per recipient, `human_opened` once per recipient. */
export function hitCounters(
  before: HitItem | undefined,
  after: HitItem,
): Array<'opened' | 'clicked' | 'human_opened'> {
  const counters: Array<'opened' | 'clicked' | 'human_opened'> = [];
  if (before === undefined || (before.hits ?? 0) === 0)
    counters.push(after.kind === 'open' ? 'opened' : 'clicked');
  if (after.kind === 'open' && after.human_first_at !== undefined && before?.human_first_at === undefined) {
    counters.push('human_opened');
  }
  return counters;
}
