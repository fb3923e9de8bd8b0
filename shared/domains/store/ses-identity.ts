import {
  CreateEmailIdentityCommand,
  DeleteEmailIdentityCommand,
  GetEmailIdentityCommand,
  PutEmailIdentityDkimSigningAttributesCommand,
  PutEmailIdentityMailFromAttributesCommand,
  SESv2Client,
} from '@aws-sdk/client-sesv2';
import { observeClient } from '../../platform/aws/client-observer.ts';
import { envString } from '../../platform/config/env.ts';

/**
 * The domain's SES identity (with `MAIL_TRANSPORT=ses`): created with BYODKIM, the domain's own RSA
 * key and selector, so the one DKIM TXT record verifies the identity and carries the service's
 * signature; its custom MAIL FROM; read on verify; removed on delete.
 */
export const sesIdentitiesManaged = (): boolean =>
  (envString('MAIL_TRANSPORT') ?? 'smtp').toLowerCase() === 'ses';

let client: SESv2Client | undefined;
const ses = () => {
  client ??= observeClient(new SESv2Client({ maxAttempts: 3 }));
  return client;
};

/** The PEM's base64 body, as SES takes a BYODKIM private key. */
export const pemBody = (pem: string): string =>
  pem
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('-----'))
    .join('');

export async function createSesIdentity(
  domain: string,
  rsa: { selector: string; privateKeyPem: string },
  mailFrom: string,
): Promise<void> {
  await ses().send(
    new CreateEmailIdentityCommand({
      EmailIdentity: domain,
      DkimSigningAttributes: {
        DomainSigningSelector: rsa.selector,
        DomainSigningPrivateKey: pemBody(rsa.privateKeyPem),
      },
    }),
  );
  try {
    await ses().send(
      new PutEmailIdentityMailFromAttributesCommand({
        EmailIdentity: domain,
        MailFromDomain: mailFrom,
        BehaviorOnMxFailure: 'REJECT_MESSAGE',
      }),
    );
  } catch (error) {
    // Nothing half-created: an identity without its MAIL FROM is removed again.
    await deleteSesIdentity(domain);
    throw error;
  }
}

/**
 * Gives an existing identity another holder's BYODKIM key and MAIL FROM (a claim moved the domain).
 * Both calls replace what SES keeps, so repeating the switch after a failure is safe.
 */
export async function switchSesIdentity(
  domain: string,
  rsa: { selector: string; privateKeyPem: string },
  mailFrom: string,
): Promise<void> {
  await ses().send(
    new PutEmailIdentityDkimSigningAttributesCommand({
      EmailIdentity: domain,
      SigningAttributesOrigin: 'EXTERNAL',
      SigningAttributes: {
        DomainSigningSelector: rsa.selector,
        DomainSigningPrivateKey: pemBody(rsa.privateKeyPem),
      },
    }),
  );
  await ses().send(
    new PutEmailIdentityMailFromAttributesCommand({
      EmailIdentity: domain,
      MailFromDomain: mailFrom,
      BehaviorOnMxFailure: 'REJECT_MESSAGE',
    }),
  );
}

export interface SesIdentityStatus {
  verifiedForSending: boolean;
  dkim: string;
  mailFrom: string;
}

export async function getSesIdentity(domain: string): Promise<SesIdentityStatus | undefined> {
  try {
    const identity = await ses().send(new GetEmailIdentityCommand({ EmailIdentity: domain }));
    return {
      verifiedForSending: identity.VerifiedForSendingStatus === true,
      dkim: identity.DkimAttributes?.Status ?? 'NOT_STARTED',
      mailFrom: identity.MailFromAttributes?.MailFromDomainStatus ?? 'PENDING',
    };
  } catch (error) {
    if ((error as { name?: string }).name === 'NotFoundException') return undefined;
    throw error;
  }
}

/** Removes the identity; an identity that is gone already is no error. */
export async function deleteSesIdentity(domain: string): Promise<void> {
  try {
    await ses().send(new DeleteEmailIdentityCommand({ EmailIdentity: domain }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'NotFoundException') throw error;
  }
}
