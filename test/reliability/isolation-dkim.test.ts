import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { registerDomain } from '../../shared/domains/registry.ts';
import { recordFigures } from '../support/figures.ts';
import {
  type ApiResponse,
  call,
  hasNoInternals,
  mintToken,
  uniqueAccount,
  uniqueDomain,
  useHostEnvironment,
} from '../support/host.ts';

/*
 * Isolation of DKIM settings between accounts, property-based (fast-check): three accounts with
 * their own domains, and random sequences of status reads and set-algorithm calls (real and dry
 * run) by any account on any domain (or an unknown one). The owner's calls act on a model; every
 * other account gets exactly the answer an unknown domain gets (404, code 112, same message), sees
 * nothing of the domain in it, and changes nothing. ISOLATION_RUNS sets the number of sequences
 * (default 6; 25 in `npm run test:reliability`). The messages part of isolation (query, delete,
 * manual-send/cancel) is test/integration/messages-isolation.test.ts.
 */
const runs = Number(process.env.ISOLATION_RUNS ?? 6);

type Step =
  | { op: 'status'; actor: number; target: number }
  | { op: 'set'; actor: number; target: number; algorithm: 'rsa-sha256' | 'ed25519-sha256'; dryRun: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('status' as const), actor: fc.nat(2), target: fc.nat(3) }),
  fc.record({
    op: fc.constant('set' as const),
    actor: fc.nat(2),
    target: fc.nat(3),
    algorithm: fc.constantFrom('rsa-sha256' as const, 'ed25519-sha256' as const),
    dryRun: fc.boolean(),
  }),
);

interface Party {
  account: string;
  token: string;
}

interface DomainModel {
  name: string;
  owner: number;
  algorithm: string;
  keys: number;
}

const status = (token: string, domain: string) =>
  call('GET', '/domain/dkim/status-1.0', { token, query: { domain } });
const setAlgorithm = (token: string, domain: string, algorithm: string, dryRun: boolean) =>
  call('POST', '/domain/dkim/set-algorithm-1.0', {
    token,
    body: { domain, algorithm },
    ...(dryRun ? { query: { dry_run: 'true' } } : {}),
  });

function assertLikeUnknown(
  response: ApiResponse<any>,
  unknownAnswer: ApiResponse<any>,
  hidden: DomainModel,
): void {
  assert.equal(response.status, 404, response.text);
  assert.equal(response.body.error.code, 112, response.text);
  assert.equal(response.body.error.message, unknownAnswer.body.error.message);
  assert.ok(!response.text.includes(hidden.name.split('.')[0] as string), 'nothing of the domain is shown');
  assert.ok(hasNoInternals(response.text));
}

describe('isolation of DKIM settings between accounts', () => {
  it('no account can read or change another account’s DKIM keys (property-based)', {
    timeout: 1_800_000,
  }, async () => {
    useHostEnvironment();
    let calls = 0;
    let foreignCalls = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 8 }), async (steps) => {
        const parties: Party[] = [];
        for (let index = 0; index < 3; index++) {
          const account = uniqueAccount('iso-dkim');
          parties.push({
            account,
            token: await mintToken({ account, scopes: ['domains:read', 'domains:write'] }),
          });
        }
        // Account 0 owns two domains, accounts 1 and 2 one each; target 3 is account 0's second one.
        const domains: DomainModel[] = [];
        for (const owner of [0, 1, 2, 0]) {
          const name = uniqueDomain('iso-dkim');
          await registerDomain(name, (parties[owner] as Party).account);
          const initial = (await status((parties[owner] as Party).token, name)).body.data;
          domains.push({
            name,
            owner,
            algorithm: initial.svc_config?.dkim_algorithm ?? 'none',
            keys: initial.dkim_keys.length,
          });
        }
        const unknown = uniqueDomain('nowhere');
        for (const entry of steps) {
          const party = parties[entry.actor] as Party;
          const target = domains[entry.target] as DomainModel;
          const owns = target.owner === entry.actor;
          calls += 1;
          if (!owns) foreignCalls += 1;
          if (entry.op === 'status') {
            const response = await status(party.token, target.name);
            if (owns) {
              assert.equal(response.status, 200, response.text);
              assert.equal(response.body.data.svc_config.dkim_algorithm, target.algorithm);
              assert.equal(response.body.data.dkim_keys.length, target.keys);
            } else assertLikeUnknown(response, await status(party.token, unknown), target);
          } else {
            const response = await setAlgorithm(party.token, target.name, entry.algorithm, entry.dryRun);
            if (owns) {
              assert.equal(response.status, 200, response.text);
              if (!entry.dryRun) {
                target.algorithm = entry.algorithm;
                // An Ed25519 key comes with its RSA-2048 companion.
                target.keys += entry.algorithm === 'ed25519-sha256' ? 2 : 1;
              }
            } else {
              assertLikeUnknown(
                response,
                await setAlgorithm(party.token, unknown, entry.algorithm, entry.dryRun),
                target,
              );
            }
          }
        }
        // Every domain is exactly as its owner's calls left it, with one active key (two on Ed25519:
        // the key and its RSA companion).
        for (const domain of domains) {
          const view = (await status((parties[domain.owner] as Party).token, domain.name)).body.data;
          assert.equal(view.svc_config.dkim_algorithm, domain.algorithm);
          assert.equal(view.dkim_keys.length, domain.keys);
          assert.equal(
            view.dkim_keys.filter((key: { status: string }) => key.status === 'active').length,
            domain.algorithm === 'ed25519-sha256' ? 2 : 1,
          );
        }
      }),
      { numRuns: runs },
    );
    recordFigures('isolation: DKIM status and set-algorithm', {
      sequences: runs,
      calls,
      foreign_calls: foreignCalls,
      leaks: 0,
      foreign_changes: 0,
    });
  });
});
