import { envNumber, envString } from '../platform/config/env.ts';
import type { RecordHosts } from './model/records.ts';

/** Settings of the self-service domains (docs/domains.md). */
const region = envString('AWS_REGION') ?? envString('AWS_DEFAULT_REGION') ?? 'us-east-1';

export const domainSettings = {
  maxDomainsPerAccount: envNumber('MAX_DOMAINS_PER_ACCOUNT', 100, { min: 1 }),
  /** At most one check on request per domain in this time (115 with Retry-After). */
  verifyGapMs: 10_000,
  defaultMailFromSubdomain: envString('MAIL_FROM_SUBDOMAIN') ?? 'bounce',
  hosts: {
    mailFromMx: (envString('MAIL_FROM_MX_HOST') ?? `feedback-smtp.${region}.amazonses.com`).toLowerCase(),
    spfInclude: envString('MAIL_FROM_SPF_INCLUDE') ?? 'include:amazonses.com',
    inboundMx: (envString('INBOUND_MX_HOST') ?? `inbound-smtp.${region}.amazonaws.com`).toLowerCase(),
  } satisfies RecordHosts,
};
