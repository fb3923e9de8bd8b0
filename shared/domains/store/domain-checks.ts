import * as table from '../../platform/table/gateway.ts';
import { keys, shardCount, stableHash } from '../../platform/table/keys.ts';
import type { CheckOutcome } from '../model/records.ts';
import { type DomainRecord, toDomain } from './domains.ts';

/**
 * The self-service state of a domain item: created through the API, its last check, the due entry
 * of the background check (gsi3, sharded by name: the check reads only what is due), the verify
 * throttle and the switches.
 */
export const checkShardOf = (domain: string): number => stableHash(domain) % shardCount.domainChecks;

export function dueEntry(domain: string, nextCheckAt: string): { gsi3pk: string; gsi3sk: string } {
  return { gsi3pk: keys.domainChecks(checkShardOf(domain)), gsi3sk: `${nextCheckAt}#${domain}` };
}

/**
 * Stores a check's outcome, only while the domain still belongs to the account; the updated
 * record, or undefined when it moved or is gone.
 */
export async function saveCheck(
  domain: string,
  accountId: string,
  outcome: CheckOutcome,
): Promise<DomainRecord | undefined> {
  const set = ['#status = :status', 'sending_ready = :ready', 'checked_at = :checked', '#records = :records'];
  const remove: string[] = [];
  const values: Record<string, unknown> = {
    ':status': outcome.status,
    ':ready': outcome.sendingReady,
    ':checked': outcome.checkedAt,
    ':records': outcome.records,
    ':account': accountId,
  };
  if (outcome.lostAt === undefined) remove.push('lost_at');
  else {
    set.push('lost_at = :lost');
    values[':lost'] = outcome.lostAt;
  }
  if (outcome.nextCheckAt === undefined) remove.push('next_check_at', 'gsi3pk', 'gsi3sk');
  else {
    const due = dueEntry(domain, outcome.nextCheckAt);
    set.push('next_check_at = :next', 'gsi3pk = :duePk', 'gsi3sk = :dueSk');
    Object.assign(values, { ':next': outcome.nextCheckAt, ':duePk': due.gsi3pk, ':dueSk': due.gsi3sk });
  }
  const result = await table.update({
    Key: keys.domain(domain),
    UpdateExpression: `SET ${set.join(', ')}${remove.length > 0 ? ` REMOVE ${remove.join(', ')}` : ''}`,
    ConditionExpression: 'account_id = :account',
    ExpressionAttributeNames: { '#status': 'status', '#records': 'records' },
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' && result.attributes !== undefined
    ? toDomain(result.attributes)
    : undefined;
}

/**
 * Takes the domain's verify slot: at most one check on request per `gapMs`. The seconds to wait
 * when the last one is more recent.
 */
export async function takeVerifySlot(
  domain: string,
  accountId: string,
  now: Date,
  gapMs: number,
): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const result = await table.update({
    Key: keys.domain(domain),
    UpdateExpression: 'SET last_verify_at = :now',
    ConditionExpression:
      'account_id = :account AND (attribute_not_exists(last_verify_at) OR last_verify_at <= :before)',
    ExpressionAttributeValues: {
      ':now': now.toISOString(),
      ':before': new Date(now.getTime() - gapMs).toISOString(),
      ':account': accountId,
    },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  });
  if (result.outcome === 'applied') return { ok: true };
  const found = result.outcome === 'condition-failed' ? result.item : undefined;
  if (found === undefined || found.account_id !== accountId) return { ok: true };
  const last = Date.parse(String(found.last_verify_at ?? now.toISOString()));
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((last + gapMs - now.getTime()) / 1000)) };
}

export interface DomainSettings {
  receiving?: boolean;
  tracking?: { opens: boolean; clicks: boolean };
}

/** Changes the switches of the account's domain; undefined when it is not the account's. */
export async function updateDomainSettings(
  domain: string,
  accountId: string,
  settings: DomainSettings,
): Promise<DomainRecord | undefined> {
  const set: string[] = [];
  const remove: string[] = [];
  const values: Record<string, unknown> = { ':account': accountId };
  if (settings.receiving === true) {
    set.push('receiving = :on');
    values[':on'] = true;
  } else if (settings.receiving === false) remove.push('receiving');
  if (settings.tracking !== undefined) {
    set.push('tracking = :tracking');
    values[':tracking'] = settings.tracking;
  }
  const parts = [
    ...(set.length > 0 ? [`SET ${set.join(', ')}`] : []),
    ...(remove.length > 0 ? [`REMOVE ${remove.join(', ')}`] : []),
  ];
  const result = await table.update({
    Key: keys.domain(domain),
    UpdateExpression: parts.length > 0 ? parts.join(' ') : 'SET account_id = :account',
    ConditionExpression: 'account_id = :account',
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW',
  });
  return result.outcome === 'applied' && result.attributes !== undefined
    ? toDomain(result.attributes)
    : undefined;
}

/**
 * Domains whose background check is due, from the due entries of every shard (gsi3): the reads
 * grow with the domains due, never with the domains held. `scanned` counts index entries read.
 */
export async function dueDomains(
  now: Date,
  limitPerShard: number,
): Promise<{ domains: string[]; scanned: number }> {
  const upper = `${now.toISOString()}#~`;
  const pages = await Promise.all(
    Array.from({ length: shardCount.domainChecks }, (_, shard) =>
      table.query({
        IndexName: 'gsi3',
        KeyConditionExpression: 'gsi3pk = :pk AND gsi3sk <= :upper',
        ExpressionAttributeValues: { ':pk': keys.domainChecks(shard), ':upper': upper },
        Limit: limitPerShard,
      }),
    ),
  );
  const domains = pages.flatMap((page) => page.items.map((item) => String(item.pk).slice('DOMAIN#'.length)));
  return { domains, scanned: pages.reduce((sum, page) => sum + page.scannedCount, 0) };
}
