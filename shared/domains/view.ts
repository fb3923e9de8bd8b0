import { formatDate } from '../platform/time/format.ts';
import { domainSettings } from './config.ts';
import type { StoredDkimKey } from './dkim/store/dkim-keys.ts';
import { listDkimKeys } from './dkim/store/dkim-keys.ts';
import {
  type DomainStatus,
  type ExpectedRecord,
  expectedRecords,
  type RecordCheck,
  type RecordError,
  type RecordPurpose,
  type RecordStatus,
  type SigningKeyRecord,
} from './model/records.ts';
import type { DomainClaim } from './store/claims.ts';
import type { DomainRecord } from './store/domains.ts';

/** The domain view of the domain routes (docs/domains.md), and the records it is built from. */
export interface RecordView {
  purpose: RecordPurpose;
  type: 'TXT' | 'MX' | 'CNAME';
  name: string;
  value: string;
  priority?: number;
  required: boolean;
  status: RecordStatus;
  checked_at?: string;
  error?: RecordError;
}

export interface DomainView {
  domain: string;
  status: DomainStatus;
  sending_ready: boolean;
  receiving: boolean;
  mail_from: string;
  created_at: string;
  checked_at: string | null;
  next_check_at: string | null;
  tracking: { opens: boolean; clicks: boolean };
  records: RecordView[];
  claim?: true;
}

export function mailFromOf(record: Pick<DomainRecord, 'domain' | 'mailFrom'>): string {
  return record.mailFrom ?? `${domainSettings.defaultMailFromSubdomain}.${record.domain}`;
}

/** The keys that sign now: the active key and its companion. */
export function signingKeysOf(record: DomainRecord, keys: readonly StoredDkimKey[]): SigningKeyRecord[] {
  const active = keys.find((key) => key.status === 'active' && key.selector === record.activeSelector);
  if (active === undefined) return [];
  return keys.filter(
    (key) => key === active || (key.status === 'active' && key.selector === active.companionSelector),
  );
}

export async function recordsOf(record: DomainRecord): Promise<ExpectedRecord[]> {
  return recordsWith(record, await listDkimKeys(record.domain));
}

/** The records to publish, given the domain's keys. */
function recordsWith(record: DomainRecord, stored: readonly StoredDkimKey[]): ExpectedRecord[] {
  const keys = signingKeysOf(record, stored);
  return expectedRecords(
    { domain: record.domain, mailFrom: mailFromOf(record), receiving: record.receiving, keys },
    domainSettings.hosts,
  );
}

function recordView(record: ExpectedRecord, check: RecordCheck | undefined): RecordView {
  const view: RecordView = {
    purpose: record.purpose,
    type: record.type,
    name: record.name,
    value: record.value,
    ...(record.priority === undefined ? {} : { priority: record.priority }),
    required: record.required,
    status: check?.status ?? 'pending',
  };
  if (check?.checked_at !== undefined) view.checked_at = formatDate(check.checked_at);
  if (check?.error !== undefined) view.error = check.error;
  return view;
}

const optionalDate = (value: string | undefined) => (value === undefined ? null : formatDate(value));

export function toView(record: DomainRecord, expected: readonly ExpectedRecord[]): DomainView {
  return {
    domain: record.domain,
    status: record.status ?? 'pending',
    sending_ready: record.sendingReady,
    receiving: record.receiving,
    mail_from: mailFromOf(record),
    created_at: formatDate(record.createdAt),
    checked_at: optionalDate(record.checkedAt),
    next_check_at: optionalDate(record.nextCheckAt),
    tracking: record.tracking ?? { opens: false, clicks: false },
    records: expected.map((entry) => recordView(entry, record.records?.[entry.purpose])),
  };
}

export async function domainView(record: DomainRecord): Promise<DomainView> {
  return toView(record, await recordsOf(record));
}

/** The view of a domain whose keys are known (just written): no read. */
export function domainViewWithKeys(record: DomainRecord, keys: readonly StoredDkimKey[]): DomainView {
  return toView(record, recordsWith(record, keys));
}

/** What a claimant sees: the domain pending, with its own DKIM record as the proof to publish. */
export function claimView(claim: DomainClaim): DomainView {
  const [record] = expectedRecords(
    { domain: claim.domain, mailFrom: '', receiving: false, keys: [claim.key] },
    domainSettings.hosts,
  );
  return {
    domain: claim.domain,
    status: 'pending',
    sending_ready: false,
    receiving: false,
    mail_from: `${domainSettings.defaultMailFromSubdomain}.${claim.domain}`,
    created_at: formatDate(claim.createdAt),
    checked_at: optionalDate(claim.check?.checked_at),
    next_check_at: null,
    tracking: { opens: false, clicks: false },
    records: record === undefined ? [] : [recordView(record, claim.check)],
    claim: true,
  };
}

export const claimRecord = (claim: DomainClaim): ExpectedRecord | undefined =>
  expectedRecords(
    { domain: claim.domain, mailFrom: '', receiving: false, keys: [claim.key] },
    domainSettings.hosts,
  )[0];
