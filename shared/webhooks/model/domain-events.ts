import { eventIdOf } from '../../messages/index.ts';

/**
 * Domain events (docs/domains.md): derived from a committed change of a domain item, like the
 * message events. A check that moves the domain to `verified`, `temporary_failure` or `failed` is
 * an event for its account; a claim that moved it to another account is `domain.claimed` for the
 * previous holder. Pure.
 */
export const domainEventTypes = [
  'domain.verified',
  'domain.temporary_failure',
  'domain.failed',
  'domain.claimed',
] as const;
export type DomainEventType = (typeof domainEventTypes)[number];

export interface DomainSnapshot {
  domain: string;
  accountId: string;
  status?: string;
  checkedAt?: string;
}

export interface DomainEvent {
  id: string;
  type: DomainEventType;
  /** Who gets it. */
  accountId: string;
  domain: string;
  status: string;
  at: string;
}

/** A domain item's snapshot, or undefined when the item is not a domain. */
export function domainSnapshotOf(item: Record<string, unknown> | undefined): DomainSnapshot | undefined {
  if (item === undefined || item.sk !== 'DOMAIN' || typeof item.domain !== 'string') return undefined;
  const snapshot: DomainSnapshot = { domain: item.domain, accountId: String(item.account_id) };
  if (typeof item.status === 'string') snapshot.status = item.status;
  if (typeof item.checked_at === 'string') snapshot.checkedAt = item.checked_at;
  return snapshot;
}

const statusEvents: Record<string, DomainEventType> = {
  verified: 'domain.verified',
  temporary_failure: 'domain.temporary_failure',
  failed: 'domain.failed',
};

export function deriveDomainEvents(before: DomainSnapshot | undefined, after: DomainSnapshot): DomainEvent[] {
  const at = after.checkedAt ?? new Date(0).toISOString();
  if (before !== undefined && before.accountId !== after.accountId) {
    return [
      {
        id: eventIdOf([after.domain, 'domain.claimed', before.accountId, after.accountId]),
        type: 'domain.claimed',
        accountId: before.accountId,
        domain: after.domain,
        status: 'claimed',
        at: new Date().toISOString(),
      },
    ];
  }
  const type = after.status === undefined ? undefined : statusEvents[after.status];
  if (type === undefined || before?.status === after.status) return [];
  return [
    {
      id: eventIdOf([after.domain, after.accountId, type, at]),
      type,
      accountId: after.accountId,
      domain: after.domain,
      status: after.status ?? '',
      at,
    },
  ];
}

export function domainEventBody(event: DomainEvent, formatDate: (iso: string) => string): string {
  return JSON.stringify({
    type: event.type,
    timestamp: formatDate(event.at),
    data: { domain: event.domain, status: event.status },
  });
}

export const isDomainEventType = (type: string): type is DomainEventType =>
  (domainEventTypes as readonly string[]).includes(type);
