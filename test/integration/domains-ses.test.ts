import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { addDomain } from '../../shared/domains/add.ts';
import { sesStillHasPreviousKey } from '../../shared/domains/check.ts';
import { removeDomain } from '../../shared/domains/delete.ts';
import { getDomain } from '../../shared/domains/store/domains.ts';
import { verifyDomain } from '../../shared/domains/verify.ts';
import { publishDomainRecords } from '../support/dns.ts';
import { uniqueAccount, uniqueDomain, useHostEnvironment } from '../support/host.ts';
import { type SesStandIn, startSesStandIn } from '../support/ses-stand-in.ts';

/**
 * With MAIL_TRANSPORT=ses, add creates the SES identity (BYODKIM with the domain's own RSA key and
 * selector, and its custom MAIL FROM), verify folds SES's status in, delete removes it, and a
 * failed step leaves nothing behind. The real AWS SDK talks to the local SESv2 stand-in.
 */
let ses: SesStandIn;
const noMail = { list: async () => [], cancel: async () => 0 };

beforeAll(async () => {
  useHostEnvironment();
  ses = await startSesStandIn();
  process.env.MAIL_TRANSPORT = 'ses';
  process.env.AWS_ENDPOINT_URL_SESV2 = ses.url;
});

afterAll(async () => {
  await ses?.close();
});

describe('SES identities of self-service domains', () => {
  it('add creates the BYODKIM identity with its MAIL FROM; verify needs SES too; delete removes it', async () => {
    const account = uniqueAccount('ses');
    const domain = uniqueDomain('ses');
    const view = await addDomain({ domain }, account);
    const identity = ses.identities.get(domain);
    assert.ok(identity, 'identity created');
    const dkim = view.records.find((record) => record.purpose === 'dkim');
    assert.equal(`${identity.selector}._domainkey.${domain}`, dkim?.name, 'the domain’s own selector');
    assert.match(identity.privateKey ?? '', /^MII[A-Za-z0-9+/=]+$/);
    assert.equal(identity.mailFrom, `bounce.${domain}`);

    publishDomainRecords(view.records);
    const waiting = await verifyDomain(domain, account);
    assert.equal(waiting.sending_ready, false, 'SES has not verified yet');
    assert.deepEqual(waiting.records.find((record) => record.purpose === 'dkim')?.error?.observed, [
      'SES: PENDING',
    ]);

    identity.dkimStatus = 'SUCCESS';
    identity.mailFromStatus = 'SUCCESS';
    const verified = await verifyDomain(domain, account, { now: new Date(Date.now() + 11_000) });
    assert.equal(verified.status, 'verified');
    assert.equal(verified.sending_ready, true);

    await removeDomain(domain, account, false, noMail);
    assert.equal(ses.identities.has(domain), false);
  });

  it('leaves nothing half-created when a step fails', async () => {
    const account = uniqueAccount('ses');
    const domain = uniqueDomain('half');
    ses.failMailFrom.add(domain);
    await assert.rejects(addDomain({ domain }, account));
    assert.equal(ses.identities.has(domain), false, 'no identity without its domain');
    assert.equal(await getDomain(domain), undefined, 'no domain without its identity');
  });

  it('a claim gives the identity the claimant’s key and MAIL FROM, retrying when SES refuses', async () => {
    const holder = uniqueAccount('ses');
    const claimant = uniqueAccount('ses');
    const domain = uniqueDomain('claim');
    await addDomain({ domain }, holder);
    const holderSelector = ses.identities.get(domain)?.selector;
    assert.ok(holderSelector);
    const claim = await addDomain({ domain }, claimant);
    assert.equal(claim.claim, true);
    const [proof] = claim.records;
    assert.ok(proof, 'the claim’s proof record');
    publishDomainRecords([proof]);

    ses.failDkimSigning.add(domain);
    const moved = await verifyDomain(domain, claimant);
    assert.equal(moved.claim, undefined, 'the DNS proof moves the domain');
    assert.equal((await getDomain(domain))?.accountId, claimant);
    assert.equal(ses.identities.get(domain)?.selector, holderSelector, 'SES refused the switch');
    const waiting = moved.records.find((record) => record.purpose === 'dkim');
    assert.deepEqual(waiting?.error?.observed, [sesStillHasPreviousKey]);
    assert.equal(moved.sending_ready, false, 'not sending-ready while SES has the previous key');
    assert.equal((await getDomain(domain))?.sesSwitchPending, true);

    ses.failDkimSigning.delete(domain);
    await verifyDomain(domain, claimant, { now: new Date(Date.now() + 11_000) });
    const identity = ses.identities.get(domain);
    assert.equal(`${identity?.selector}._domainkey.${domain}`, proof.name, 'the claimant’s key');
    assert.equal(identity?.mailFrom, `bounce.${domain}`);
    assert.equal((await getDomain(domain))?.sesSwitchPending, undefined, 'the switch is done');
    await removeDomain(domain, claimant, false, noMail);
  });
});
