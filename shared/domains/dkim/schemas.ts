import * as z from 'zod/mini';
import { serverDate } from '../../platform/schemas/dates.ts';
import { describe } from '../../platform/schemas/describe.ts';
import { dkimAlgorithms } from './model/dkim.ts';

/**
 * Request and success-response schemas of the DKIM routes (`dkim-status`, `dkim-set-algorithm`).
 * The response schemas describe the `data` member of the envelope (a route's `response` in its wing's routes.ts).
 */

// Letters of either case (the service lower-cases); no `i` flag, so the OpenAPI pattern says the same.
const domainPattern =
  /^(?=.{1,253}\.?$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9-]{2,63}\.?$/;

const domain = describe(
  z
    .string({ error: 'domain must be a string' })
    .check(
      z.trim(),
      z.maxLength(254, 'domain is at most 254 characters'),
      z.regex(domainPattern, 'Must be a domain name'),
    ),
  'A sending domain registered on the platform for your account',
  'example.test',
);

const algorithm = describe(
  z.enum(dkimAlgorithms, { error: `algorithm must be one of ${dkimAlgorithms.join(', ')}` }),
  'DKIM signing algorithm: rsa-sha256 (2048-bit RSA) or ed25519-sha256 (RFC 8463)',
  'rsa-sha256',
);

const dnsStatus = describe(
  z.enum(['verified', 'pending', 'mismatch', 'unreachable']),
  'Result of DNS TXT lookups of the active keys (the worst of them): verified (our keys are published), pending (a record is missing), mismatch (another or a malformed record), unreachable (a lookup failed)',
);

export const dkimStatusRequest = z.strictObject({ domain });

export const dkimKeyRecord = z.object({
  selector: describe(z.string(), 'DKIM selector (s= tag)', 'rsa-20261122-3f9a1c'),
  algorithm,
  dns_name: describe(
    z.string(),
    'Owner name of the TXT record: <selector>._domainkey.<domain>',
    'rsa-20261122-3f9a1c._domainkey.example.test',
  ),
  dns_type: z.literal('TXT'),
  dns_value: describe(z.string(), 'The TXT record value: v=DKIM1; k=rsa|ed25519; p=<public key>'),
  dns_value_chunks: describe(
    z.array(z.string().check(z.maxLength(255))),
    'dns_value split into the ≤255-character strings that DNS providers ask for; joined they equal dns_value',
  ),
  status: describe(
    z.enum(['active', 'retired']),
    'active: signs the mail now (an ed25519-sha256 domain has two active keys: the Ed25519 key and the RSA-2048 key that signs beside it; publish both). retired: replaced by a newer key; keep its record a few days for mail in transit, then remove it (retired keys are listed for 30 days)',
  ),
  created_at: serverDate('When the key was created (ISO 8601 with offset)'),
  retired_at: z.optional(serverDate('When the key was retired (ISO 8601 with offset)')),
});

export const dkimStatusResponse = z.object({
  svc_config: describe(
    z.nullable(
      z.object({
        dkim_enabled: describe(z.boolean(), 'Whether outgoing mail of the domain is DKIM-signed'),
        dkim_algorithm: algorithm,
        dkim_selector: describe(
          z.string(),
          'Selector of the active key (on ed25519-sha256, the Ed25519 key; its RSA companion is listed in dkim_keys)',
        ),
        dkim_dns_status: dnsStatus,
      }),
    ),
    'The active DKIM configuration, or null when the domain has no active key',
  ),
  dkim_keys: describe(
    z.array(dkimKeyRecord),
    'Every key of the domain (active, and retired for 30 days after retirement), newest first',
  ),
});

export const dkimSetAlgorithmRequest = z.strictObject({ domain, algorithm });

export const dkimSetAlgorithmResponse = z.object({
  svc_config: z.object({ dkim_algorithm: algorithm, dkim_enabled: z.boolean() }),
  dkim_keys: describe(
    z.array(dkimKeyRecord),
    'The domain’s keys as the status operation shows them after the change (newest first): publish the new active key’s TXT record',
  ),
  dry_run: z.optional(describe(z.literal(true), 'Present and true when nothing was changed (?dry_run=true)')),
});

export type DkimStatusRequest = z.infer<typeof dkimStatusRequest>;
export type DkimStatusResponse = z.infer<typeof dkimStatusResponse>;
export type DkimSetAlgorithmRequest = z.infer<typeof dkimSetAlgorithmRequest>;
export type DkimSetAlgorithmResponse = z.infer<typeof dkimSetAlgorithmResponse>;
