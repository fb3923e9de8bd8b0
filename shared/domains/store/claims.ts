import * as table from '../../platform/table/gateway.ts';
import { keys } from '../../platform/table/keys.ts';
import type { NewStoredKey } from '../dkim/store/dkim-keys.ts';
import { listDkimKeys } from '../dkim/store/dkim-keys.ts';
import type { RecordCheck } from '../model/records.ts';

/**
 * A claim (docs/domains.md, "Claims"): another account asks for a domain that one account holds.
 * The claim item, beside the domain's item, keeps the claimant's own RSA key (its own selector):
 * publishing that key's record is the proof, and nothing moves before it verifies.
 */
export interface DomainClaim {
  domain: string;
  accountId: string;
  createdAt: string;
  key: Omit<NewStoredKey, 'createdAt'>;
  check?: RecordCheck;
}

function toClaim(item: Record<string, unknown>): DomainClaim {
  const claim: DomainClaim = {
    domain: String(item.domain),
    accountId: String(item.account_id),
    createdAt: String(item.created_at),
    key: {
      domain: String(item.domain),
      selector: String(item.selector),
      algorithm: 'rsa-sha256',
      publicKey: String(item.public_key),
      privateKeyCiphertext: String(item.private_key_ciphertext),
    },
  };
  if (typeof item.check === 'object' && item.check !== null) claim.check = item.check as RecordCheck;
  return claim;
}

export async function getClaim(domain: string, accountId: string): Promise<DomainClaim | undefined> {
  const item = await table.get(keys.domainClaim(domain, accountId));
  return item === undefined ? undefined : toClaim(item);
}

/** Stores a new claim; the existing one when the account claimed the domain before. */
export async function putClaim(claim: DomainClaim): Promise<DomainClaim> {
  const result = await table.put({
    Item: {
      ...keys.domainClaim(claim.domain, claim.accountId),
      domain: claim.domain,
      account_id: claim.accountId,
      created_at: claim.createdAt,
      selector: claim.key.selector,
      public_key: claim.key.publicKey,
      private_key_ciphertext: claim.key.privateKeyCiphertext,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  if (result.outcome === 'applied') return claim;
  return (await getClaim(claim.domain, claim.accountId)) ?? claim;
}

export async function saveClaimCheck(domain: string, accountId: string, check: RecordCheck): Promise<void> {
  await table.update({
    Key: keys.domainClaim(domain, accountId),
    UpdateExpression: 'SET #check = :check',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#check': 'check' },
    ExpressionAttributeValues: { ':check': check },
  });
}

/**
 * Moves the domain to the claimant in one transaction, only while `previousAccount` still holds
 * it: the domain item changes hands (a new, unverified API domain signing with the claimant's key),
 * the claimant's key becomes an active DKIM key, the claim item goes. The previous holder's keys are
 * then removed: they no longer sign, since the domain names the new key and owner. With
 * `sesSwitch`, the item is marked until the SES identity takes the claimant's key (sesSwitchDone).
 * False when the domain changed meanwhile.
 */
export async function completeClaim(
  claim: DomainClaim,
  previousAccount: string,
  mailFrom: string,
  now: Date,
  nextCheckAt: string,
  due: { gsi3pk: string; gsi3sk: string },
  sesSwitch = false,
): Promise<boolean> {
  const at = now.toISOString();
  const switchMark = sesSwitch ? ', ses_switch_pending = :true' : '';
  const outcome = await table.transact([
    {
      Update: {
        Key: keys.domain(claim.domain),
        UpdateExpression:
          'SET account_id = :claimant, gsi1pk = :byAccount, active_selector = :selector, origin = :api, ' +
          'sending_ready = :false, #status = :pending, mail_from = :mailFrom, created_at = :at, ' +
          `next_check_at = :next, gsi3pk = :duePk, gsi3sk = :dueSk, #records = :none${switchMark} ` +
          `REMOVE receiving, tracking, last_verify_at, lost_at, checked_at${sesSwitch ? '' : ', ses_switch_pending'}`,
        ConditionExpression: 'account_id = :previous',
        ExpressionAttributeNames: { '#status': 'status', '#records': 'records' },
        ExpressionAttributeValues: {
          ':claimant': claim.accountId,
          ':byAccount': keys.domainsOfAccount(claim.accountId),
          ':selector': claim.key.selector,
          ':api': 'api',
          ':false': false,
          ':pending': 'pending',
          ':mailFrom': mailFrom,
          ':at': at,
          ':next': nextCheckAt,
          ':duePk': due.gsi3pk,
          ':dueSk': due.gsi3sk,
          ':none': {},
          ':previous': previousAccount,
          ...(sesSwitch ? { ':true': true } : {}),
        },
      },
    },
    {
      Put: {
        Item: {
          ...keys.dkimKey(claim.domain, claim.key.selector),
          domain: claim.domain,
          selector: claim.key.selector,
          algorithm: claim.key.algorithm,
          public_key: claim.key.publicKey,
          private_key_ciphertext: claim.key.privateKeyCiphertext,
          status: 'active',
          created_at: at,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    { Delete: { Key: keys.domainClaim(claim.domain, claim.accountId) } },
  ]);
  if (outcome.outcome !== 'applied') return false;
  for (const key of await listDkimKeys(claim.domain)) {
    if (key.selector !== claim.key.selector)
      await table.delete({ Key: keys.dkimKey(claim.domain, key.selector) });
  }
  return true;
}

/** The SES identity took the key `selector` (still the domain's active one): the mark goes. */
export async function sesSwitchDone(domain: string, selector: string): Promise<void> {
  await table.update({
    Key: keys.domain(domain),
    UpdateExpression: 'REMOVE ses_switch_pending',
    ConditionExpression: 'active_selector = :selector',
    ExpressionAttributeValues: { ':selector': selector },
  });
}

/** Removes every claim of a domain (when the domain is deleted). */
export async function deleteClaims(domain: string): Promise<void> {
  const items = await table.queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.domain(domain).pk, ':prefix': 'CLAIM#' },
  });
  for (const item of items) await table.delete({ Key: { pk: item.pk, sk: item.sk } });
}
