import * as z from 'zod/mini';
import { serverDate } from '../platform/schemas/dates.ts';
import { describe } from '../platform/schemas/describe.ts';
import { dkimAlgorithms } from './dkim/model/dkim.ts';
import { domainStatuses, recordErrorCodes, recordPurposes, recordStatuses } from './model/records.ts';

/**
 * Request and success-response schemas of the self-service domain routes (docs/domains.md). The
 * name itself is checked by the service (shared/domains/model/domain-name.ts), so a bad name gets
 * the precise reason in its 107 detail.
 */
const domain = describe(
  z.string({ error: 'domain must be a string' }).check(z.maxLength(1000, 'domain is too long')),
  'A domain name in its ASCII (IDNA) form, without a trailing dot',
  'example.test',
);

const subdomain = describe(
  z
    .string({ error: 'mail_from_subdomain must be a string' })
    .check(
      z.regex(
        /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
        'Must be DNS labels such as bounce',
      ),
      z.maxLength(63, 'mail_from_subdomain is at most 63 characters'),
    ),
  'Subdomain of the custom MAIL FROM domain (bounces and SPF)',
  'bounce',
);

const tracking = describe(
  z.strictObject({ opens: z.boolean(), clicks: z.boolean() }),
  'Open and click tracking of the domain’s mail',
);

export const domainAddRequest = z.strictObject({
  domain,
  mail_from_subdomain: z.optional(subdomain),
  dkim_algorithm: z.optional(
    z.enum(dkimAlgorithms, { error: `dkim_algorithm must be one of ${dkimAlgorithms.join(', ')}` }),
  ),
  receiving: z.optional(z.boolean({ error: 'receiving must be a boolean' })),
});
export type DomainAddRequest = z.infer<typeof domainAddRequest>;

export const domainQueryRequest = z.strictObject({
  domain: z.optional(domain),
  status: z.optional(z.enum(domainStatuses, { error: `status must be one of ${domainStatuses.join(', ')}` })),
  limit: z.optional(
    z.int().check(z.minimum(1, 'limit is at least 1'), z.maximum(100, 'limit is at most 100')),
  ),
  cursor: z.optional(z.string().check(z.maxLength(2000))),
});
export type DomainQueryRequest = z.infer<typeof domainQueryRequest>;

export const domainVerifyRequest = z.strictObject({ domain });
export type DomainVerifyRequest = z.infer<typeof domainVerifyRequest>;

export const domainUpdateRequest = z.strictObject({
  domain,
  receiving: z.optional(z.boolean({ error: 'receiving must be a boolean' })),
  tracking: z.optional(tracking),
});
export type DomainUpdateRequest = z.infer<typeof domainUpdateRequest>;

export const domainDeleteRequest = z.strictObject({
  domain,
  cancel_unsent: z.optional(z.boolean({ error: 'cancel_unsent must be a boolean' })),
});
export type DomainDeleteRequest = z.infer<typeof domainDeleteRequest>;

const recordView = z.object({
  purpose: z.enum(recordPurposes),
  type: z.enum(['TXT', 'MX', 'CNAME']),
  name: describe(z.string(), 'Owner name of the record'),
  value: describe(z.string(), 'Value to publish (for MX: the host)'),
  priority: z.optional(z.number()),
  required: describe(z.boolean(), 'Needed for `verified`; DMARC and receiving MX are recommended'),
  status: z.enum(recordStatuses),
  checked_at: z.optional(serverDate('When this record was last looked up')),
  error: z.optional(
    z.object({
      code: z.enum(recordErrorCodes),
      observed: describe(z.array(z.string()), 'What the resolver answered at the name'),
    }),
  ),
});

export const domainView = z.object({
  domain: z.string(),
  status: z.enum(domainStatuses),
  sending_ready: describe(z.boolean(), 'Mail from the domain is accepted'),
  receiving: z.boolean(),
  mail_from: describe(z.string(), 'The custom MAIL FROM domain'),
  created_at: serverDate('When the domain was added'),
  checked_at: z.nullable(serverDate('Last DNS check')),
  next_check_at: z.nullable(serverDate('Next background DNS check')),
  tracking: z.object({ opens: z.boolean(), clicks: z.boolean() }),
  records: z.array(recordView),
  claim: z.optional(
    describe(z.literal(true), 'Another account holds the domain: publish the DKIM record to claim it'),
  ),
});

export const domainResponse = z.object({ domain: domainView });
export const domainQueryResponse = z.union([
  domainResponse,
  z.object({ domains: z.array(domainView), count: z.number(), next_cursor: z.nullable(z.string()) }),
]);
export const domainDeleteResponse = z.object({
  domain: z.string(),
  deleted: z.literal(true),
  cancelled: describe(z.number(), 'Unsent messages cancelled first (cancel_unsent)'),
});
