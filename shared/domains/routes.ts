import { Code } from '../platform/errors/catalogue.ts';
import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { at } from '../platform/schemas/examples.ts';
import {
  dkimSetAlgorithmRequest,
  dkimSetAlgorithmResponse,
  dkimStatusRequest,
  dkimStatusResponse,
} from './dkim/schemas.ts';
import {
  domainAddRequest,
  domainDeleteRequest,
  domainDeleteResponse,
  domainQueryRequest,
  domainQueryResponse,
  domainResponse,
  domainUpdateRequest,
  domainVerifyRequest,
} from './schemas.ts';

export const dkimStatus = route('dkim-status', 'GET /domain/dkim/status-1.0', ['domains:read']);
export const dkimSetAlgorithm = route(
  'dkim-set-algorithm',
  'POST /domain/dkim/set-algorithm-1.0',
  ['domains:write'],
  { dryRun: true },
);

export const domainAdd = route('domain-add', 'POST /domain/add-1.0', ['domains:write']);
export const domainQuery = route('domain-query', 'POST /domain/query-1.0', ['domains:read']);
export const domainVerify = route('domain-verify', 'POST /domain/verify-1.0', ['domains:write']);
export const domainUpdate = route('domain-update', 'POST /domain/update-1.0', ['domains:write']);
export const domainDelete = route('domain-delete', 'POST /domain/delete-1.0', ['domains:write']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const domainsRoutes = [
  dkimStatus,
  dkimSetAlgorithm,
  domainAdd,
  domainQuery,
  domainVerify,
  domainUpdate,
  domainDelete,
] as const;

const exampleView = {
  domain: 'example.test',
  status: 'pending',
  sending_ready: false,
  receiving: false,
  mail_from: 'bounce.example.test',
  created_at: at,
  checked_at: at,
  next_check_at: at,
  tracking: { opens: false, clicks: false },
  records: [
    {
      purpose: 'mail_from_spf',
      type: 'TXT',
      name: 'bounce.example.test',
      value: 'v=spf1 include:amazonses.com ~all',
      required: true,
      status: 'pending',
      checked_at: at,
      error: { code: 'MULTIPLE_RECORDS', observed: ['v=spf1 include:amazonses.com ~all', 'v=spf1 mx ~all'] },
    },
  ],
};
const oneDomain = { domain: { summary: 'A domain', value: { domain: 'example.test' } } };

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const domainsRouteDetails = {
  'dkim-status': {
    summary: 'DKIM configuration, keys and DNS status of a domain',
    tag: 'domains',
    // Reads keys and does DNS lookups; never sees private keys.
    access: { table: 'read' },
    request: dkimStatusRequest,
    requestIn: 'query',
    response: dkimStatusResponse,
    // 112: the domain is not on the platform for this account (spec 7.3, rule 1).
    errors: [Code.NotFound],
    examples: {
      request: { domain: { summary: 'A registered domain', value: { domain: 'example.test' } } },
      response: {
        active: {
          summary: 'An active, published RSA key',
          value: {
            svc_config: {
              dkim_enabled: true,
              dkim_algorithm: 'rsa-sha256',
              dkim_selector: 'rsa-20261122-3f9a1c',
              dkim_dns_status: 'verified',
            },
            dkim_keys: [
              {
                selector: 'rsa-20261122-3f9a1c',
                algorithm: 'rsa-sha256',
                dns_name: 'rsa-20261122-3f9a1c._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA',
                dns_value_chunks: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'],
                status: 'active',
                created_at: at,
              },
            ],
          },
        },
      },
    },
  },
  'dkim-set-algorithm': {
    summary: 'Rotate to a new DKIM key with the given algorithm',
    tag: 'domains',
    // Creates a key pair and stores the private key encrypted with the KMS key.
    access: { table: 'write', dkimKey: 'encrypt' },
    request: dkimSetAlgorithmRequest,
    requestIn: 'body',
    response: dkimSetAlgorithmResponse,
    // 112: unknown domain; 5: the key switch is one transaction. (115, which every route can answer,
    // also when the domain got 10 new keys in 24 hours: docs/dkim.md, "Bounds".)
    errors: [Code.CommitFailed, Code.NotFound],
    examples: {
      request: {
        ed25519: {
          summary: 'Rotate to an Ed25519 key',
          value: { domain: 'example.test', algorithm: 'ed25519-sha256' },
        },
      },
      response: {
        rotated: {
          summary: 'Rotated',
          value: {
            svc_config: { dkim_algorithm: 'ed25519-sha256', dkim_enabled: true },
            dkim_keys: [
              {
                selector: 'ed25519-20261122-7b2e4d',
                algorithm: 'ed25519-sha256',
                dns_name: 'ed25519-20261122-7b2e4d._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
                dns_value_chunks: ['v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='],
                status: 'active',
                created_at: at,
              },
              {
                selector: 'rsa-20261122-3f9a1c',
                algorithm: 'rsa-sha256',
                dns_name: 'rsa-20261122-3f9a1c._domainkey.example.test',
                dns_type: 'TXT',
                dns_value: 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA',
                dns_value_chunks: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'],
                status: 'retired',
                created_at: at,
                retired_at: at,
              },
            ],
          },
        },
      },
    },
  },
  'domain-add': {
    summary: 'Add a sending domain (or claim one another account holds)',
    tag: 'domains',
    // Creates the domain item and its DKIM keys (the private keys encrypted with the KMS key); an
    // RSA key comes out of the pool (decrypted there, encrypted again for the domain).
    access: { table: 'write', dkimKey: 'encrypt-decrypt', dkimKeyPool: 'take', sesIdentities: true },
    request: domainAddRequest,
    requestIn: 'body',
    response: domainResponse,
    // 111: the account's domain limit.
    errors: [Code.MethodValidation, Code.CommitFailed],
    examples: {
      request: oneDomain,
      response: { pending: { summary: 'Added, records to publish', value: { domain: exampleView } } },
    },
  },
  'domain-query': {
    summary: 'One domain with its records, or a page of the account’s domains',
    tag: 'domains',
    access: { table: 'read' },
    request: domainQueryRequest,
    requestIn: 'body',
    response: domainQueryResponse,
    errors: [Code.NotFound],
    examples: {
      request: oneDomain,
      response: { one: { summary: 'One domain', value: { domain: exampleView } } },
    },
  },
  'domain-verify': {
    summary: 'Check a domain’s DNS records now',
    tag: 'domains',
    // Moves a claimed domain (its keys) and records the check (with SES's view of the identity);
    // after a claim, opens the claimant's key to give it to the SES identity.
    access: { table: 'write-delete', sesIdentities: true, dkimKey: 'decrypt' },
    request: domainVerifyRequest,
    requestIn: 'body',
    response: domainResponse,
    errors: [Code.NotFound],
    examples: {
      request: oneDomain,
      response: { checked: { summary: 'Checked', value: { domain: exampleView } } },
    },
  },
  'domain-update': {
    summary: 'Switch receiving and tracking of a domain',
    tag: 'domains',
    access: { table: 'write' },
    request: domainUpdateRequest,
    requestIn: 'body',
    response: domainResponse,
    errors: [Code.NotFound],
    examples: {
      request: {
        receiving: { summary: 'Receive mail', value: { domain: 'example.test', receiving: true } },
      },
      response: { updated: { summary: 'Updated', value: { domain: exampleView } } },
    },
  },
  'domain-delete': {
    summary: 'Remove a domain and its keys',
    tag: 'domains',
    // Cancels unsent mail (message updates), removes the domain, its keys and claims.
    access: { table: 'write-delete', sesIdentities: true },
    request: domainDeleteRequest,
    requestIn: 'body',
    response: domainDeleteResponse,
    // 111: mail from the domain is not sent yet.
    errors: [Code.NotFound, Code.MethodValidation],
    examples: {
      request: oneDomain,
      response: {
        deleted: { summary: 'Deleted', value: { domain: 'example.test', deleted: true, cancelled: 0 } },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof domainsRoutes)[number]>;
