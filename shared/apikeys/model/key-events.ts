/**
 * The `key.created`, `key.rotated` and `key.revoked` webhook events (docs/webhooks.md), derived
 * from committed changes of an API key item on the table stream, as message events are: the
 * stream is the outbox, so no event is announced for a change that was not written. A write of
 * `last_used_at` changes nothing an event is about. Pure.
 */
export const keyEventTypes = ['key.created', 'key.rotated', 'key.revoked'] as const;
export type KeyEventType = (typeof keyEventTypes)[number];

export interface KeySnapshot {
  accountId: string;
  keyId: string;
  name: string;
  digest: string;
  createdAt: string;
  rotatedAt?: string;
  revokedAt?: string;
}

export interface KeyChange {
  type: KeyEventType;
  at: string;
  snapshot: KeySnapshot;
}

export function keySnapshotOf(item: Record<string, unknown> | undefined): KeySnapshot | undefined {
  if (item === undefined || typeof item.pk !== 'string' || !item.pk.startsWith('APIKEY#')) return undefined;
  const snapshot: KeySnapshot = {
    accountId: String(item.account_id),
    keyId: String(item.key_id),
    name: String(item.name),
    digest: String(item.digest),
    createdAt: String(item.created_at),
  };
  if (typeof item.rotated_at === 'string') snapshot.rotatedAt = item.rotated_at;
  if (typeof item.revoked_at === 'string') snapshot.revokedAt = item.revoked_at;
  return snapshot;
}

export function deriveKeyChanges(before: KeySnapshot | undefined, after: KeySnapshot): KeyChange[] {
  if (before === undefined) return [{ type: 'key.created', at: after.createdAt, snapshot: after }];
  const changes: KeyChange[] = [];
  if (before.digest !== after.digest) {
    changes.push({ type: 'key.rotated', at: after.rotatedAt ?? after.createdAt, snapshot: after });
  }
  if (before.revokedAt === undefined && after.revokedAt !== undefined) {
    changes.push({ type: 'key.revoked', at: after.revokedAt, snapshot: after });
  }
  return changes;
}
