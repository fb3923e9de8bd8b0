import { compareDnsRecords, type DkimAlgorithm, dkimDnsName, dkimDnsValue } from '../dkim/model/dkim.ts';

/**
 * The DNS records a domain must publish, how one lookup answer compares with one of them, and how a
 * check's results fold into the domain's status (docs/domains.md). Pure: no I/O, times passed in.
 */
export const recordPurposes = [
  'dkim',
  'dkim_ed25519',
  'mail_from_mx',
  'mail_from_spf',
  'dmarc',
  'receiving_mx',
] as const;
export type RecordPurpose = (typeof recordPurposes)[number];
export const recordStatuses = ['pending', 'verified', 'failed', 'temporary_failure'] as const;
export type RecordStatus = (typeof recordStatuses)[number];
export const recordErrorCodes = [
  'HOST_NOT_FOUND',
  'TYPE_NOT_FOUND',
  'INVALID_VALUE',
  'MULTIPLE_RECORDS',
  'DNS_SERVER_ERROR',
] as const;
export type RecordErrorCode = (typeof recordErrorCodes)[number];
export const domainStatuses = [
  'pending',
  'verified',
  'partially_verified',
  'temporary_failure',
  'failed',
] as const;
export type DomainStatus = (typeof domainStatuses)[number];

export interface ExpectedRecord {
  purpose: RecordPurpose;
  type: 'TXT' | 'MX';
  name: string;
  value: string;
  priority?: number;
  required: boolean;
}

export interface RecordError {
  code: RecordErrorCode;
  observed: string[];
}

/** The last check of one record. */
export interface RecordCheck {
  status: RecordStatus;
  checked_at?: string;
  error?: RecordError;
}

export interface SigningKeyRecord {
  selector: string;
  algorithm: DkimAlgorithm;
  publicKey: string;
}

export interface RecordHosts {
  /** The MX host of the MAIL FROM domain (SES's feedback endpoint of the region). */
  mailFromMx: string;
  /** The SPF mechanism that authorises the sender (`include:amazonses.com`). */
  spfInclude: string;
  /** The MX host that receives mail for the domain. */
  inboundMx: string;
}

export interface DomainShape {
  domain: string;
  mailFrom: string;
  receiving: boolean;
  keys: readonly SigningKeyRecord[];
}

export const mxPriority = 10;

/** Every record to publish, in the order the view lists them. */
export function expectedRecords(shape: DomainShape, hosts: RecordHosts): ExpectedRecord[] {
  const records: ExpectedRecord[] = [];
  const rsa = shape.keys.find((key) => key.algorithm === 'rsa-sha256');
  const ed25519 = shape.keys.find((key) => key.algorithm === 'ed25519-sha256');
  for (const [purpose, key] of [
    ['dkim', rsa],
    ['dkim_ed25519', ed25519],
  ] as const) {
    if (key === undefined) continue;
    records.push({
      purpose,
      type: 'TXT',
      name: dkimDnsName(key.selector, shape.domain),
      value: dkimDnsValue(key.algorithm, key.publicKey),
      required: true,
    });
  }
  records.push(
    {
      purpose: 'mail_from_mx',
      type: 'MX',
      name: shape.mailFrom,
      value: hosts.mailFromMx,
      priority: mxPriority,
      required: true,
    },
    {
      purpose: 'mail_from_spf',
      type: 'TXT',
      name: shape.mailFrom,
      value: `v=spf1 ${hosts.spfInclude} ~all`,
      required: true,
    },
    {
      purpose: 'dmarc',
      type: 'TXT',
      name: `_dmarc.${shape.domain}`,
      value: 'v=DMARC1; p=none;',
      required: false,
    },
  );
  if (shape.receiving) {
    records.push({
      purpose: 'receiving_mx',
      type: 'MX',
      name: shape.domain,
      value: hosts.inboundMx,
      priority: mxPriority,
      required: false,
    });
  }
  return records;
}

/** What a lookup answered, as the comparison needs it. */
export type Answer =
  | { kind: 'found'; values: string[] }
  | { kind: 'no-name' }
  | { kind: 'no-type' }
  | { kind: 'failed'; reason: string };

const startsWith = (prefix: string) => (value: string) =>
  value.trimStart().toLowerCase().startsWith(prefix.toLowerCase());

/** How the answer at the record's name compares with the record: undefined when it matches. */
export function compareRecord(expected: ExpectedRecord, answer: Answer): RecordError | undefined {
  if (answer.kind === 'failed') return { code: 'DNS_SERVER_ERROR', observed: [answer.reason] };
  if (answer.kind === 'no-name') return { code: 'HOST_NOT_FOUND', observed: [] };
  if (answer.kind === 'no-type') return { code: 'TYPE_NOT_FOUND', observed: [] };
  const observed = answer.values;
  const invalid: RecordError = { code: 'INVALID_VALUE', observed };
  const multiple: RecordError = { code: 'MULTIPLE_RECORDS', observed };
  switch (expected.purpose) {
    case 'dkim':
    case 'dkim_ed25519': {
      const candidates = observed.filter((value) => /(^|;)\s*(v\s*=\s*DKIM1|p\s*=)/i.test(value));
      if (candidates.length > 1) return multiple;
      const [only] = candidates;
      if (only === undefined) return invalid;
      const algorithm = expected.purpose === 'dkim' ? 'rsa-sha256' : 'ed25519-sha256';
      const publicKey = /p=([^;]*)/.exec(expected.value)?.[1] ?? '';
      return compareDnsRecords([[only]], algorithm, publicKey) === 'verified' ? undefined : invalid;
    }
    case 'mail_from_spf': {
      const spf = observed.filter(startsWith('v=spf1'));
      if (spf.length > 1) return multiple;
      const [only] = spf;
      if (only === undefined) return invalid;
      const mechanism = expected.value.split(/\s+/)[1]?.toLowerCase() ?? '';
      return only.toLowerCase().split(/\s+/).includes(mechanism) ? undefined : invalid;
    }
    case 'dmarc': {
      const dmarc = observed.filter(startsWith('v=DMARC1'));
      if (dmarc.length > 1) return multiple;
      return dmarc.length === 1 ? undefined : invalid;
    }
    case 'mail_from_mx':
    case 'receiving_mx': {
      const host = expected.value.toLowerCase();
      const matches = observed.some((value) => value.split(' ')[1] === host);
      if (!matches) return invalid;
      // The MAIL FROM domain's bounces must all reach the one host.
      return expected.purpose === 'mail_from_mx' && observed.length > 1 ? multiple : undefined;
    }
  }
}

export const hourMs = 3_600_000;
/** Without its required records for this long, a domain is `failed`. */
export const graceMs = 72 * hourMs;

export interface CheckState {
  status: DomainStatus;
  sendingReady: boolean;
  createdAt: string;
  /** When a required record of a verified domain was first found missing (the grace's start). */
  lostAt?: string;
  records: Partial<Record<RecordPurpose, RecordCheck>>;
}

export interface CheckOutcome extends CheckState {
  checkedAt: string;
  /** Undefined when no further background check is due (`failed`). */
  nextCheckAt?: string;
}

/**
 * Folds one check into the domain's state. A resolver failure never counts against a record: it
 * keeps its last status (with the error shown), so an outage of DNS cannot fail a domain.
 */
export function foldCheck(
  previous: CheckState,
  expected: readonly ExpectedRecord[],
  errors: ReadonlyMap<RecordPurpose, RecordError | undefined>,
  now: Date,
): CheckOutcome {
  const at = now.toISOString();
  const wasVerified = previous.status === 'verified' || previous.status === 'temporary_failure';
  const required = expected.filter((record) => record.required);
  const ok = (record: ExpectedRecord) => errors.get(record.purpose) === undefined;
  const serverError = (record: ExpectedRecord) => errors.get(record.purpose)?.code === 'DNS_SERVER_ERROR';
  const missing = required.filter((record) => !ok(record) && !serverError(record));
  const unknown = required.filter(serverError);
  const ageMs = now.getTime() - Date.parse(previous.createdAt);

  let status: DomainStatus;
  let sendingReady: boolean;
  let lostAt: string | undefined;
  if (missing.length === 0 && unknown.length === 0) {
    status = 'verified';
    sendingReady = true;
  } else if (wasVerified) {
    if (missing.length === 0) {
      status = previous.status;
      sendingReady = previous.sendingReady;
      lostAt = previous.lostAt;
    } else {
      lostAt = previous.lostAt ?? at;
      const expired = now.getTime() - Date.parse(lostAt) >= graceMs;
      status = expired ? 'failed' : 'temporary_failure';
      sendingReady = !expired;
    }
  } else if (previous.status === 'failed' && missing.length > 0) {
    status = 'failed';
    sendingReady = false;
  } else {
    status =
      ageMs >= graceMs && missing.length > 0
        ? 'failed'
        : required.some(ok)
          ? 'partially_verified'
          : 'pending';
    sendingReady = false;
  }

  const records: Partial<Record<RecordPurpose, RecordCheck>> = {};
  for (const record of expected) {
    const error = errors.get(record.purpose);
    const before = previous.records[record.purpose]?.status ?? 'pending';
    let recordStatus: RecordStatus;
    if (error === undefined) recordStatus = 'verified';
    else if (error.code === 'DNS_SERVER_ERROR') recordStatus = before;
    else if (status === 'failed' && record.required) recordStatus = 'failed';
    else if (before === 'verified' || before === 'temporary_failure') recordStatus = 'temporary_failure';
    else recordStatus = 'pending';
    records[record.purpose] = {
      status: recordStatus,
      checked_at: at,
      ...(error === undefined ? {} : { error }),
    };
  }
  const outcome: CheckOutcome = {
    status,
    sendingReady,
    createdAt: previous.createdAt,
    records,
    checkedAt: at,
  };
  if (lostAt !== undefined) outcome.lostAt = lostAt;
  const next = nextCheckAfter(status, ageMs);
  if (next !== undefined) outcome.nextCheckAt = new Date(now.getTime() + next).toISOString();
  return outcome;
}

/**
 * The background schedule: a new domain every 5 minutes in its first hour, then hourly; a domain
 * that lost a record hourly through its grace; a verified domain daily; a failed one never.
 */
export function nextCheckAfter(status: DomainStatus, ageMs: number): number | undefined {
  if (status === 'failed') return undefined;
  if (status === 'verified') return 24 * hourMs;
  if (status === 'temporary_failure') return hourMs;
  return ageMs < hourMs ? 5 * 60_000 : hourMs;
}
