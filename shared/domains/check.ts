import { type Lookup, lookupRecords } from '../platform/dns/record-lookup.ts';
import {
  type CheckState,
  compareRecord,
  type ExpectedRecord,
  foldCheck,
  type RecordCheck,
  type RecordError,
  type RecordPurpose,
} from './model/records.ts';
import { finishSesSwitch } from './ses-switch.ts';
import { type DomainClaim, saveClaimCheck } from './store/claims.ts';
import { saveCheck } from './store/domain-checks.ts';
import type { DomainRecord } from './store/domains.ts';
import { getSesIdentity, type SesIdentityStatus, sesIdentitiesManaged } from './store/ses-identity.ts';
import { claimRecord, recordsOf } from './view.ts';

/**
 * One DNS check of a domain: every record looked up (each name and type once), compared, folded
 * into the domain's status and stored. Used by verify and by the background check.
 */
async function compareAll(
  expected: readonly ExpectedRecord[],
  lookup: Lookup,
): Promise<Map<RecordPurpose, RecordError | undefined>> {
  const answers = new Map<string, ReturnType<Lookup>>();
  for (const record of expected) {
    const key = `${record.type} ${record.name}`;
    if (!answers.has(key)) answers.set(key, lookup(record.name, record.type));
  }
  const errors = new Map<RecordPurpose, RecordError | undefined>();
  for (const record of expected) {
    const answer = await answers.get(`${record.type} ${record.name}`);
    if (answer !== undefined) errors.set(record.purpose, compareRecord(record, answer));
  }
  return errors;
}

export async function checkDomain(
  record: DomainRecord,
  now: Date,
  lookup: Lookup = lookupRecords,
): Promise<DomainRecord | undefined> {
  const expected = await recordsOf(record);
  const errors = await compareAll(expected, lookup);
  if (record.origin === 'api' && sesIdentitiesManaged()) {
    if (record.sesSwitchPending === true && !(await finishSesSwitch(record)))
      errors.set('dkim', { code: 'DNS_SERVER_ERROR', observed: [sesStillHasPreviousKey] });
    foldSes(errors, await getSesIdentity(record.domain));
  }
  const previous: CheckState = {
    status: record.status ?? (record.sendingReady ? 'verified' : 'pending'),
    sendingReady: record.sendingReady,
    createdAt: record.createdAt,
    records: record.records ?? {},
  };
  if (record.lostAt !== undefined) previous.lostAt = record.lostAt;
  const outcome = foldCheck(previous, expected, errors, now);
  // An operator's domain is trusted as it always was: checks inform, they never stop its mail.
  if (record.origin === 'operator') outcome.sendingReady = true;
  return saveCheck(record.domain, record.accountId, outcome);
}

/** The DKIM record's observed value while a claim's SES switch waits for its retry. */
export const sesStillHasPreviousKey = 'SES: the identity still signs with the previous holder’s key';

/**
 * SES's view of the identity joins DNS's: SES sends only once it verified the DKIM record and the
 * MAIL FROM MX itself, which trails DNS by minutes. Still pending at SES, a record keeps its status
 * (like a resolver failure, so the domain is not yet verified); failed at SES, it shows SES's word.
 */
function foldSes(
  errors: Map<RecordPurpose, RecordError | undefined>,
  identity: SesIdentityStatus | undefined,
): void {
  const states: Array<[RecordPurpose, string]> = [
    ['dkim', identity === undefined ? 'NOT_FOUND' : identity.dkim],
    ['mail_from_mx', identity === undefined ? 'NOT_FOUND' : identity.mailFrom],
  ];
  for (const [purpose, state] of states) {
    if (state === 'SUCCESS' || errors.get(purpose) !== undefined) continue;
    const observed = [`SES: ${state}`];
    errors.set(
      purpose,
      state === 'FAILED' || state === 'NOT_FOUND'
        ? { code: 'INVALID_VALUE', observed }
        : { code: 'DNS_SERVER_ERROR', observed },
    );
  }
}

/** Checks a claim's proof record; true when it verifies. */
export async function checkClaim(
  claim: DomainClaim,
  now: Date,
  lookup: Lookup = lookupRecords,
): Promise<{ proven: boolean; check: RecordCheck }> {
  const record = claimRecord(claim);
  if (record === undefined) return { proven: false, check: { status: 'pending' } };
  const error = (await compareAll([record], lookup)).get(record.purpose);
  const check: RecordCheck =
    error === undefined
      ? { status: 'verified', checked_at: now.toISOString() }
      : { status: 'pending', checked_at: now.toISOString(), error };
  await saveClaimCheck(claim.domain, claim.accountId, check);
  return { proven: error === undefined, check };
}
