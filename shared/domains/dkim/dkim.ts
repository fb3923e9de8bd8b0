import { Code } from '../../platform/errors/catalogue.ts';
import { isServiceError, ServiceError } from '../../platform/errors/service-error.ts';
import { formatDate } from '../../platform/time/format.ts';
import { type DomainRecord, getDomain, normaliseDomain } from '../store/domains.ts';
import { checkDkimDns } from './dns-check.ts';
import { createActiveDkimKey } from './key-store.ts';
import {
  combinedDnsStatus,
  type DkimAlgorithm,
  type DkimDnsStatus,
  type DkimKeyView,
  dkimDnsName,
  isExpiredKey,
  keyView,
  maxNewKeysPerDay,
  nextKeyAllowedAt,
} from './model/dkim.ts';
import { listDkimKeys } from './store/dkim-keys.ts';

/** The DKIM endpoints' use cases: read a domain's configuration, rotate to a new key. */

/** Rotations of one domain racing each other: each loser retries from the winner's key. */
const maxRotationAttempts = 10;
/**
 * Pause before rotating again after a lost race: random (so contenders do not collide again in
 * step) and growing, because each attempt generates new keys, which takes tens of milliseconds.
 */
const rotationBackoffMs = (attempt: number) => Math.random() * 50 * attempt;

export interface DkimStatus {
  svc_config: {
    dkim_enabled: boolean;
    dkim_algorithm: DkimAlgorithm;
    dkim_selector: string;
    dkim_dns_status: DkimDnsStatus;
  } | null;
  dkim_keys: DkimKeyView[];
}

export interface DkimAlgorithmChange {
  svc_config: { dkim_algorithm: DkimAlgorithm; dkim_enabled: boolean };
  /** The domain's keys as the status operation shows them after the change: the record to publish. */
  dkim_keys: DkimKeyView[];
  dry_run?: true;
}

async function keyViews(domain: string): Promise<DkimKeyView[]> {
  const now = Date.now();
  const keys = (await listDkimKeys(domain)).filter((key) => !isExpiredKey(key, now));
  return keys.map((key) =>
    keyView(
      key,
      formatDate(key.createdAt),
      key.retiredAt === undefined ? undefined : formatDate(key.retiredAt),
    ),
  );
}

/**
 * The caller's domain, or 112. A domain of another account answers exactly like an unknown one, so
 * nobody learns which domains other accounts have.
 */
async function ownedDomain(domain: string, accountId: string): Promise<DomainRecord> {
  const record = await getDomain(normaliseDomain(domain));
  if (record === undefined || record.accountId !== accountId) {
    throw new ServiceError(Code.NotFound, 'Domain not found', {
      details: [{ field: 'domain', message: 'No such domain on the platform for your account' }],
    });
  }
  return record;
}

export async function getDkimStatus(domain: string, accountId: string): Promise<DkimStatus> {
  const record = await ownedDomain(domain, accountId);
  const now = Date.now();
  // A retired key past its retention is gone, even while the table's TTL has not removed it yet.
  const keys = (await listDkimKeys(record.domain)).filter((key) => !isExpiredKey(key, now));
  const active = keys.find((key) => key.status === 'active' && key.selector === record.activeSelector);
  const views = keys.map((key) =>
    keyView(
      key,
      formatDate(key.createdAt),
      key.retiredAt === undefined ? undefined : formatDate(key.retiredAt),
    ),
  );
  if (active === undefined) return { svc_config: null, dkim_keys: views };
  // The active key and its RSA companion sign every message: both records must be published.
  const signing = keys.filter(
    (key) => key === active || (key.status === 'active' && key.selector === active.companionSelector),
  );
  const statuses = await Promise.all(
    signing.map((key) => checkDkimDns(dkimDnsName(key.selector, key.domain), key.algorithm, key.publicKey)),
  );
  return {
    svc_config: {
      dkim_enabled: true,
      dkim_algorithm: active.algorithm,
      dkim_selector: active.selector,
      dkim_dns_status: combinedDnsStatus(statuses),
    },
    dkim_keys: views,
  };
}

/**
 * The rotation rate (docs/dkim.md, "Bounds"): at most `maxNewKeysPerDay` new keys per domain in any
 * 24 hours, else 115 with the time the next one is allowed (and Retry-After).
 */
async function assertRotationAllowed(domain: string): Promise<void> {
  const now = Date.now();
  const next = nextKeyAllowedAt(await listDkimKeys(domain), now);
  if (next === undefined) return;
  throw new ServiceError(Code.TooManyRequests, 'Too many DKIM key rotations for this domain', {
    details: [
      {
        field: 'domain',
        message: `At most ${maxNewKeysPerDay} new DKIM keys per domain in 24 hours; the next is allowed at ${formatDate(new Date(next).toISOString())}`,
      },
    ],
    headers: { 'retry-after': String(Math.max(1, Math.ceil((next - now) / 1000))) },
  });
}

/**
 * Rotates the domain to a new key pair of the algorithm (also when it is the current algorithm: a
 * plain key rotation), with a new RSA companion for Ed25519. The new keys sign from now on; the
 * previous ones stay listed as retired until their retention passes.
 * A dry run checks the domain and the input and changes nothing.
 */
export async function setDkimAlgorithm(
  domain: string,
  accountId: string,
  algorithm: DkimAlgorithm,
  dryRun: boolean,
): Promise<DkimAlgorithmChange> {
  // A concurrent rotation of the same domain makes the activation's transaction fail (code 5): the
  // request lost a race, it did not fail. Read the domain again and rotate from the new active key.
  let record: DomainRecord;
  for (let attempt = 1; ; attempt++) {
    record = await ownedDomain(domain, accountId);
    // Checked on every attempt: a rotation that won a race meanwhile counts.
    await assertRotationAllowed(record.domain);
    if (dryRun) break;
    try {
      await createActiveDkimKey(record.domain, accountId, algorithm, record.activeSelector);
      break;
    } catch (error) {
      if (!isServiceError(error) || error.code !== Code.CommitFailed || attempt >= maxRotationAttempts)
        throw error;
      await new Promise((resolve) => setTimeout(resolve, rotationBackoffMs(attempt)));
    }
  }
  const change: DkimAlgorithmChange = {
    svc_config: { dkim_algorithm: algorithm, dkim_enabled: true },
    dkim_keys: await keyViews(record.domain),
  };
  if (dryRun) change.dry_run = true;
  return change;
}
