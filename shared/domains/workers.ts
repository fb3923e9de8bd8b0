import type { Worker } from '../platform/worker.ts';

/** Checks the DNS records of the domains whose check is due (docs/domains.md, "Schedule"). */
export const domainChecksWorker = {
  id: 'domain-checks',
  trigger: 'schedule',
  everyMinutes: 5,
  summary: 'Checks the DNS records of domains whose background check is due',
  impact:
    'domains added through the API stop turning verified on their own (verify still works), and a domain that lost a record is not reported',
  // Reads due entries and domains, stores each check's outcome; retries a claim's SES key switch.
  access: { table: 'write', sesIdentities: true, dkimKey: 'decrypt' },
} as const satisfies Worker;

/** Keeps the pool of RSA-2048 DKIM keys that domain add takes from full (docs/domains.md, "Key pool"). */
export const dkimKeyPoolWorker = {
  id: 'dkim-key-pool',
  trigger: 'schedule',
  everyMinutes: 1,
  summary: 'Keeps the pool of pre-generated RSA-2048 DKIM keys full',
  impact: 'domain add generates its RSA key on the request once the pool is empty, and answers slower',
  // Counts the pool, stores new keys sealed with the DKIM key.
  access: { table: 'write', dkimKey: 'encrypt' },
} as const satisfies Worker;

/** The functions of this wing that no HTTP route invokes: the worker table (shared/workers.ts) lists them. */
export const domainsWorkers = [domainChecksWorker, dkimKeyPoolWorker] as const;
