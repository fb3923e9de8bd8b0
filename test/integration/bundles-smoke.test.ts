import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import type { RecordedRequest } from '../../infra/local/aws-call-recorder.ts';
import { Code } from '../../shared/platform/errors/catalogue.ts';
import { routeDetails, routes } from '../../shared/routes.ts';
import { workers } from '../../shared/workers.ts';
import { publishDomainRecords } from '../support/dns.ts';
import { call, hostInfo, mintToken, uniqueAccount, uniqueDomain } from '../support/host.ts';
import {
  allows,
  deployedPolicies,
  type FunctionPolicy,
  readRecordedRequests,
  unusedActions,
} from '../support/iam-check.ts';
import { sendInbound } from '../support/inbound.ts';
import { mapLimit } from '../support/messages.ts';
import { type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';
import { type SesStandIn, startSesStandIn } from '../support/ses-stand-in.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/**
 * What AWS runs, tested: a host that runs every function from the bundle `cdk synth` builds for it
 * (`LOCAL_CODE=bundles`, infra/local/function-code.ts), outside the project tree, so a package left
 * out of a bundle, a lazy chunk that does not load or a missing createRequire banner fails here.
 * The host records every AWS call its functions make (infra/local/aws-call-recorder.ts); the last
 * test checks each against that function's role in the synthesized templates (docs/deploy.md).
 * The domain routes' SES identity calls need `MAIL_TRANSPORT=ses`, which would take the sender off
 * SMTP: a second bundled host runs them against the SESv2 stand-in, with its own call log.
 */
let host: SecondaryHost;
let receiver: WebhookReceiver;
let workDir: string;
let callLog: string;
let sesCallLog: string;
let sesHost: SecondaryHost | undefined;
const account = uniqueAccount('bundles');
const domain = uniqueDomain('bundles');
let token: string;

const api = <T = any>(path: string, body: unknown, method = 'POST') =>
  call<T>(method, path, { baseUrl: host.url, token, ...(method === 'GET' ? {} : { body }) });

async function waitForStatus(uuid: string, status: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const answer = await api('/message/query-1.0', { message_uuid: uuid });
      assert.equal(answer.body.data?.status, status, answer.text);
    },
    { timeout: 90_000, interval: 300 },
  );
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'svc-mail-bundles-test-'));
  callLog = join(workDir, 'aws-calls.jsonl');
  sesCallLog = join(workDir, 'aws-calls-ses.jsonl');
  host = await startSecondaryHost({
    LOCAL_CODE: 'bundles',
    AWS_CALL_LOG: callLog,
    SEED_DOMAINS: `${domain}=${account}`,
    // The bundled pool function fills a small DKIM key pool soon after start, for domain add to take from.
    DKIM_INTERVAL_SECONDS: '5',
    DKIM_KEY_POOL_SIZE: '2',
  });
  // The operator's steps (a receiving domain) go straight to this host's emulators.
  for (const [name, value] of Object.entries(host.env)) process.env[name] = value;
  const { setReceiving } = await import('../../shared/domains/registry.ts');
  await setReceiving(domain, true);
  token = await mintToken({ account, signer: host });
  receiver = await startWebhookReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await sesHost?.stop();
  await host?.stop();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe('the functions as deployed: their bundles behind the local gateway and event sources', () => {
  it('a message goes through the sender to delivered, with its webhook, content and statistics', {
    timeout: 300_000,
  }, async () => {
    const hook = await api('/webhook/add-1.0', {
      url: `${receiver.url}/delivered`,
      events: ['message.delivered'],
    });
    assert.equal(hook.status, 200, hook.text);
    const added = await api('/message/add-1.0', {
      message_sender: `noreply@${domain}`,
      to: ['Ada <ada@recipient.test>'],
      subject: 'From the bundles',
      content: {
        kind: 'mixed',
        text: 'Sent by the bundled sender',
        html: '<p>Sent by the bundled sender</p>',
      },
    });
    assert.equal(added.status, 200, added.text);
    const uuid = added.body.data.message_uuid as string;
    await waitForStatus(uuid, 'delivered');
    await receiver.waitFor((received) => received.some((entry) => entry.body.includes(uuid)));

    const content = await api('/message/content-1.0', { message_uuid: uuid });
    assert.equal(content.status, 200, content.text);
    assert.match(content.text, /Sent by the bundled sender/);

    const today = new Date().toISOString().slice(0, 10);
    await vi.waitFor(
      async () => {
        const stats = await api('/stats/query-1.0', {
          date_from: `${today}T00:00:00Z`,
          date_to: `${today}T23:59:59Z`,
          granularity: 'day',
          group_by: 'domain',
        });
        assert.equal(stats.status, 200, stats.text);
        assert.match(JSON.stringify(stats.body.data), new RegExp(domain.replace(/\./g, '\\.')));
      },
      { timeout: 60_000, interval: 500 },
    );
  });

  it('a templated message is rendered and delivered', async () => {
    for (const [action, body] of [
      ['add', { alias: 'welcome', name: 'Welcome', subject: 'Welcome {{name}}', html: '<p>Hi {{name}}</p>' }],
      ['publish', { alias: 'welcome' }],
    ] as const) {
      const answer = await api(`/template/${action}-1.0`, body);
      assert.equal(answer.status, 200, answer.text);
    }
    const added = await api('/message/add-1.0', {
      message_sender: `noreply@${domain}`,
      to: ['grace@recipient.test'],
      template: { alias: 'welcome', model: { name: 'Grace' } },
    });
    assert.equal(added.status, 200, added.text);
    await waitForStatus(added.body.data.message_uuid as string, 'delivered');
  });

  it('a domain add takes its key from the pool the bundled dkim-key-pool function filled', async () => {
    const { poolKeyIds } = await import('../../shared/domains/dkim/store/key-pool.ts');
    await vi.waitFor(async () => assert.equal((await poolKeyIds(2)).length, 2), {
      timeout: 60_000,
      interval: 500,
    });
    const added = await api('/domain/add-1.0', { domain: uniqueDomain('pooled') });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.data.domain.status, 'pending');
  });

  it('inbound mail is parsed by the bundled inbound function and listed', async () => {
    const to = `help@${domain}`;
    const sent = await sendInbound(
      { from: 'someone@elsewhere.test', to, subject: 'Inbound through the bundle', text: 'Hello' },
      { port: Number(new URL(host.env.INBOUND_SMTP_URL as string).port) },
    );
    assert.ok(sent.ok, sent.response);
    await vi.waitFor(
      async () => {
        const page = await api('/inbound/query-1.0', { filters: { recipient: to } });
        assert.equal(page.body.data?.inbound?.[0]?.subject, 'Inbound through the bundle', page.text);
      },
      { timeout: 60_000, interval: 300 },
    );
  });

  // Builds the bundle of each route not built yet: minutes on a busy 2-core machine.
  it('every route answers from its bundle (its documented example request), none fails to run', {
    timeout: 400_000,
  }, async () => {
    const failures = await mapLimit(routes, 2, async (route) => {
      const example = Object.values(routeDetails[route.id].examples?.request ?? {})[0]?.value;
      const answer = await call(route.method, route.path, {
        baseUrl: host.url,
        token,
        ...(route.method === 'GET' || example === undefined ? {} : { body: example }),
        skipContract:
          'documented examples name resources this account does not have; only the status matters',
      });
      const code = (answer.body as { error?: { code?: number } })?.error?.code;
      // A bundle that does not load answers 8 from the gateway; a chunk or package missing at run
      // time, 2. The catalogue's 503 codes (a busy emulator) are answers of a function that ran.
      return answer.status === 500 || code === Code.ActionNotMapped || code === Code.Internal
        ? `${route.id}: ${answer.status} ${answer.text.slice(0, 200)}`
        : undefined;
    });
    assert.deepEqual(failures.filter(Boolean), []);
  });
});

describe('the domain functions as deployed with SES: identities created, switched on a claim, removed', () => {
  let ses: SesStandIn;
  beforeAll(async () => {
    ses = await startSesStandIn();
    sesHost = await startSecondaryHost({
      LOCAL_CODE: 'bundles',
      AWS_CALL_LOG: sesCallLog,
      MAIL_TRANSPORT: 'ses',
      AWS_ENDPOINT_URL_SESV2: ses.url,
      DNS_SERVERS: hostInfo().dns.server,
    });
  }, 120_000);
  afterAll(async () => {
    await ses?.close();
  });

  it('add, verify, update, a claim and delete make the SES identity calls', {
    timeout: 300_000,
  }, async () => {
    const host2 = sesHost as SecondaryHost;
    const holder = await mintToken({ account: uniqueAccount('bundles-holder'), signer: host2 });
    const claimant = await mintToken({ account: uniqueAccount('bundles-claimant'), signer: host2 });
    const name = uniqueDomain('bundles-ses');
    const post = async (who: string, path: string, body: unknown) => {
      const answer = await call<any>('POST', path, { baseUrl: host2.url, token: who, body });
      assert.equal(answer.status, 200, `${path}: ${answer.text}`);
      return answer.body.data.domain;
    };

    const added = await post(holder, '/domain/add-1.0', { domain: name });
    assert.ok(ses.identities.has(name), 'add created the SES identity');
    publishDomainRecords(added.records);
    const identity = ses.identities.get(name);
    if (identity !== undefined) Object.assign(identity, { dkimStatus: 'SUCCESS', mailFromStatus: 'SUCCESS' });
    assert.equal((await post(holder, '/domain/verify-1.0', { domain: name })).status, 'verified');
    assert.equal(
      (await post(holder, '/domain/update-1.0', { domain: name, receiving: true })).receiving,
      true,
    );

    const claim = await post(claimant, '/domain/add-1.0', { domain: name });
    assert.equal(claim.claim, true);
    publishDomainRecords(claim.records);
    const moved = await post(claimant, '/domain/verify-1.0', { domain: name });
    assert.equal(moved.claim, undefined, 'the proof moved the domain');
    assert.equal(`${ses.identities.get(name)?.selector}._domainkey.${name}`, claim.records[0].name);

    const deleted = await call<any>('POST', '/domain/delete-1.0', {
      baseUrl: host2.url,
      token: claimant,
      body: { domain: name },
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(ses.identities.has(name), false, 'delete removed the identity');
  });
});

/** The recorded calls the roles would refuse, as `function: action on resource`. */
function refusedCalls(requests: RecordedRequest[], policies: FunctionPolicy[]): string[] {
  const byFunction = new Map(policies.map((policy) => [policy.functionId, policy]));
  return [
    ...new Set(
      requests
        .filter((request) => {
          const policy = byFunction.get(request.function);
          return policy === undefined || !allows(policy, request);
        })
        .map((request) => `${request.function}: ${request.action} on ${request.resource}`),
    ),
  ];
}

describe('IAM: every AWS call the functions made is one their deployed role allows', () => {
  it('checks each recorded call against its function policy in the synthesized templates', () => {
    const requests = readRecordedRequests(callLog);
    const policies = deployedPolicies(host.env);
    const byFunction = new Map(policies.map((policy) => [policy.functionId, policy]));
    const functionIds = [...routes.map((route) => route.id), ...workers.map((worker) => worker.id)];
    assert.deepEqual([...byFunction.keys()].sort(), [...functionIds].sort(), 'every function has a role');
    // The flows above reach the send path, the workers and the template and inbound routes.
    const recorded = new Set(requests.map((request) => request.function));
    for (const id of [
      'message-add',
      'sender',
      'dkim-key-pool',
      'domain-add',
      'webhook-delivery',
      'inbound',
      'stats-counter',
      'template-add',
    ])
      assert.ok(recorded.has(id), `no AWS call of ${id} was recorded`);

    // The SES host's calls, against the roles with that host's resource names.
    const sesRequests = readRecordedRequests(sesCallLog);
    const sesActions = new Set(
      sesRequests.filter((request) => request.action.startsWith('ses:')).map((request) => request.action),
    );
    for (const action of [
      'ses:CreateEmailIdentity',
      'ses:PutEmailIdentityMailFromAttributes',
      'ses:GetEmailIdentity',
      'ses:PutEmailIdentityDkimSigningAttributes',
      'ses:DeleteEmailIdentity',
    ])
      assert.ok(sesActions.has(action), `no ${action} was recorded`);

    const refused = [
      ...refusedCalls(requests, policies),
      ...refusedCalls(sesRequests, deployedPolicies((sesHost as SecondaryHost).env)),
    ];
    const report = [...unusedActions(policies, [...requests, ...sesRequests])]
      .map(([id, actions]) => `#   ${id}: ${actions.join(', ')}`)
      .join('\n');
    process.stdout.write(
      `# IAM: ${requests.length + sesRequests.length} recorded requests of ${recorded.size} functions (and the SES host's domain functions); allowed but never used here:\n${report}\n`,
    );
    assert.deepEqual(refused, [], 'calls the deployed role would refuse');
  });
});
