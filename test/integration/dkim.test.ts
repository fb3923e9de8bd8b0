import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { authenticate } from 'mailauth';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { beforeAll, describe, it } from 'vitest';
import { openPrivateKey } from '../../shared/domains/dkim/key-store.ts';
import { dkimSetAlgorithmResponse, dkimStatusResponse } from '../../shared/domains/dkim/schemas.ts';
import { getActiveSigningKey, getActiveSigningKeys } from '../../shared/domains/dkim/signing-keys.ts';
import { listDkimKeys } from '../../shared/domains/dkim/store/dkim-keys.ts';
import { registerDomain } from '../../shared/domains/registry.ts';
import { putDomain } from '../../shared/domains/store/domains.ts';
import { publishTxt, removeName, silenceName, testDnsServer } from '../support/dns.ts';
import {
  type ApiResponse,
  call,
  hasNoInternals,
  hostInfo,
  mintToken,
  uniqueAccount,
  uniqueDomain,
  useHostEnvironment,
} from '../support/host.ts';

const statusPath = '/domain/dkim/status-1.0';
const setPath = '/domain/dkim/set-algorithm-1.0';
const isoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;

/** Every response body and domain of this file, checked at the end for private key material. */
const seen: string[] = [];
const domains: string[] = ['example.test'];

async function record(response: Promise<ApiResponse<any>>): Promise<ApiResponse<any>> {
  const result = await response;
  seen.push(result.text);
  return result;
}

async function newDomain(): Promise<{ domain: string; account: string; token: string }> {
  const account = uniqueAccount('dkim');
  const domain = uniqueDomain('dkim');
  assert.equal(await registerDomain(domain, account), 'registered');
  domains.push(domain);
  const token = await mintToken({ account, scopes: ['domains:read', 'domains:write'] });
  return { domain, account, token };
}

/** Every success body must match the exported response schema (the contract the OpenAPI uses). */
function conforms(schema: typeof dkimStatusResponse | typeof dkimSetAlgorithmResponse) {
  return (response: ApiResponse<any>) => {
    if (response.status === 200) {
      const parsed = schema.safeParse(response.body.data);
      assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
    }
    return response;
  };
}

function status(token: string, domain: string) {
  return record(call('GET', statusPath, { token, query: { domain } })).then(conforms(dkimStatusResponse));
}

function setAlgorithm(token: string, body: unknown, query: Record<string, string> = {}) {
  return record(call('POST', setPath, { token, body, query })).then(conforms(dkimSetAlgorithmResponse));
}

function activeKey(body: { data: { dkim_keys: Array<{ status: string }> } }) {
  const key = body.data.dkim_keys.find((candidate) => candidate.status === 'active');
  assert.ok(key, 'an active key is listed');
  return key as unknown as {
    selector: string;
    algorithm: string;
    dns_name: string;
    dns_value: string;
    dns_value_chunks: string[];
  };
}

/** A resolver for mailauth that asks the test run's DNS server, as a receiving MTA would ask DNS. */
function testResolver() {
  const resolver = new Resolver({ timeout: 1_500, tries: 2 });
  resolver.setServers([testDnsServer()]);
  return (name: string, type: string) => resolver.resolve(name, type) as Promise<string[][]>;
}

function message(domain: string): string {
  return [
    `From: App <app@${domain}>`,
    'To: someone@example.net',
    'Subject: DKIM round trip',
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <${Date.now()}@${domain}>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Signed with the key the service stored, verified with the record the service published.',
    '',
  ].join('\r\n');
}

async function signAndVerify(domain: string, expectedAlgorithm: string): Promise<void> {
  const key = await getActiveSigningKey(domain);
  assert.ok(key, 'the domain has a signing key');
  assert.equal(key.algorithm, expectedAlgorithm);
  const raw = message(domain);
  const signature = {
    signingDomain: key.domain,
    selector: key.selector,
    privateKey: key.privateKeyPem,
    algorithm: key.algorithm,
  };
  const signed = await dkimSign(raw, { ...signature, signatureData: [signature] });
  assert.deepEqual(signed.errors ?? [], []);
  assert.match(signed.signatures, new RegExp(`a=${expectedAlgorithm}`));
  const result = await authenticate(signed.signatures + raw, {
    resolver: testResolver() as never,
    ip: '192.0.2.1',
    helo: 'mta.example.net',
    sender: `app@${domain}`,
    mta: 'mx.example.net',
    disableArc: true,
    disableBimi: true,
    disableDmarc: true,
  });
  const dkim = result.dkim.results[0];
  assert.ok(dkim, 'a DKIM result');
  assert.equal(dkim.status.result, 'pass', JSON.stringify(dkim.status));
  assert.equal(dkim.signingDomain, domain);
  assert.equal(dkim.selector, key.selector);
}

describe('DKIM status and set-algorithm', () => {
  beforeAll(() => {
    useHostEnvironment();
  });

  it('shows a registered domain with an active rsa-sha256 key in the latest shape', async () => {
    const { domain, token } = await newDomain();
    const response = await status(token, domain);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(Object.keys(response.body).sort(), ['data']);
    assert.deepEqual(Object.keys(response.body.data).sort(), ['dkim_keys', 'svc_config']);
    assert.ok(!('lam3_records' in response.body.data));
    for (const field of ['dkim_enabled', 'dkim_algorithm', 'dkim_selector', 'dkim_dns_status'])
      assert.ok(!(field in response.body.data), `${field} is not at the top level`);

    const { svc_config: config, dkim_keys: keys } = response.body.data;
    assert.equal(keys.length, 1);
    const [key] = keys;
    assert.deepEqual(config, {
      dkim_enabled: true,
      dkim_algorithm: 'rsa-sha256',
      dkim_selector: key.selector,
      dkim_dns_status: 'pending',
    });
    assert.match(key.selector, /^rsa-\d{8}-[0-9a-f]{6}$/);
    assert.equal(key.algorithm, 'rsa-sha256');
    assert.equal(key.dns_name, `${key.selector}._domainkey.${domain}`);
    assert.equal(key.dns_type, 'TXT');
    assert.match(key.dns_value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
    assert.equal(key.status, 'active');
    assert.match(key.created_at, isoWithOffset);
    assert.ok(!key.created_at.endsWith('Z'));
    // An RSA-2048 record is longer than one TXT string: the chunks are what DNS providers need.
    assert.ok(key.dns_value.length > 255);
    assert.ok(key.dns_value_chunks.length >= 2);
    for (const chunk of key.dns_value_chunks) assert.ok(chunk.length <= 255);
    assert.equal(key.dns_value_chunks.join(''), key.dns_value);
    assert.equal(response.headers.get('cache-control'), 'no-store');
  });

  it('reports pending, then verified once the record is published in DNS', async () => {
    const { domain, token } = await newDomain();
    const first = await status(token, domain);
    assert.equal(first.body.data.svc_config.dkim_dns_status, 'pending');

    const key = activeKey(first.body);
    publishTxt(key.dns_name, [key.dns_value_chunks]);
    const second = await status(token, domain);
    assert.equal(second.status, 200);
    assert.equal(second.body.data.svc_config.dkim_dns_status, 'verified');
  });

  it('reports mismatch for a record with another key, and verified once it is corrected', async () => {
    const { domain, token } = await newDomain();
    const other = await newDomain();
    const key = activeKey((await status(token, domain)).body);
    const otherKey = activeKey((await status(other.token, other.domain)).body);
    publishTxt(key.dns_name, [otherKey.dns_value_chunks]);
    assert.equal((await status(token, domain)).body.data.svc_config.dkim_dns_status, 'mismatch');

    // Providers split long values differently; any split that joins to the value verifies.
    publishTxt(key.dns_name, [key.dns_value.match(/.{1,100}/g) ?? []]);
    assert.equal((await status(token, domain)).body.data.svc_config.dkim_dns_status, 'verified');
  });

  it('reports unreachable when the DNS server does not answer, and still answers the request', async () => {
    const { domain, token } = await newDomain();
    const key = activeKey((await status(token, domain)).body);
    silenceName(key.dns_name);
    const response = await status(token, domain);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.data.svc_config.dkim_dns_status, 'unreachable');
    removeName(key.dns_name);
  });

  it('answers svc_config null for a domain without an active key', async () => {
    const account = uniqueAccount('dkim');
    const domain = uniqueDomain('dkim');
    assert.equal(await putDomain(domain, account), true);
    const token = await mintToken({ account, scopes: ['domains:read'] });
    const response = await status(token, domain);
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body, { data: { svc_config: null, dkim_keys: [] } });
  });

  it('answers 404 (112) for an unknown domain and for another account’s domain, on both endpoints', async () => {
    const { token } = await newDomain();
    const foreign = await newDomain();
    const unknown = uniqueDomain('nowhere');
    const answers = [
      await status(token, unknown),
      await status(token, foreign.domain),
      await setAlgorithm(token, { domain: unknown, algorithm: 'ed25519-sha256' }),
      await setAlgorithm(token, { domain: foreign.domain, algorithm: 'ed25519-sha256' }),
    ];
    for (const response of answers) {
      assert.equal(response.status, 404, response.text);
      assert.equal(response.body.error.code, 112);
      assert.ok(hasNoInternals(response.text));
    }
    // The foreign domain is indistinguishable from an unknown one, and was not changed.
    assert.equal(answers[1]?.body.error.message, answers[0]?.body.error.message);
    const foreignKeys = (await status(foreign.token, foreign.domain)).body.data.dkim_keys;
    assert.equal(foreignKeys.length, 1);
    assert.equal(foreignKeys[0].algorithm, 'rsa-sha256');
  });

  it('answers 107 for an unknown algorithm, a missing domain and a malformed domain', async () => {
    const { domain, token } = await newDomain();
    const badAlgorithm = await setAlgorithm(token, { domain, algorithm: 'rsa-sha1' });
    assert.equal(badAlgorithm.status, 406);
    assert.equal(badAlgorithm.body.error.code, 107);
    assert.deepEqual(
      badAlgorithm.body.error.details.map((detail: { field: string }) => detail.field),
      ['algorithm'],
    );
    const missing = await setAlgorithm(token, { algorithm: 'rsa-sha256' });
    assert.equal(missing.body.error.code, 107);
    const malformed = await status(token, 'not a domain');
    assert.equal(malformed.body.error.code, 107);
    const noQuery = await record(call('GET', statusPath, { token }));
    assert.equal(noQuery.body.error.code, 107);
    assert.equal((await status(token, domain)).body.data.dkim_keys.length, 1, 'nothing changed');
  });

  it('needs domains:read to read and domains:write to change', async () => {
    const { domain, account } = await newDomain();
    const readOnly = await mintToken({ account, scopes: ['domains:read'] });
    const writeOnly = await mintToken({ account, scopes: ['domains:write'] });
    assert.equal((await status(writeOnly, domain)).body.error.code, 113);
    const refused = await setAlgorithm(readOnly, { domain, algorithm: 'ed25519-sha256' });
    assert.equal(refused.body.error.code, 113);
  });

  it('rotates to ed25519-sha256: new active key, the previous one listed as retired', async () => {
    const { domain, token } = await newDomain();
    const before = activeKey((await status(token, domain)).body);

    const response = await setAlgorithm(token, { domain: domain.toUpperCase(), algorithm: 'ed25519-sha256' });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.data.svc_config, { dkim_algorithm: 'ed25519-sha256', dkim_enabled: true });

    const after = (await status(token, domain)).body.data;
    assert.deepEqual(response.body.data.dkim_keys, after.dkim_keys, 'the answer lists the keys to publish');
    // The Ed25519 key, the RSA-2048 companion created with it, and the retired RSA key.
    assert.equal(after.dkim_keys.length, 3);
    const [newest, companion, previous] = after.dkim_keys;
    assert.equal(companion.status, 'active');
    assert.equal(companion.algorithm, 'rsa-sha256');
    assert.match(companion.selector, /^rsa-\d{8}-[0-9a-f]{6}$/);
    assert.notEqual(companion.selector, before.selector);
    assert.equal(companion.created_at, newest.created_at);
    assert.equal(newest.status, 'active');
    assert.equal(newest.algorithm, 'ed25519-sha256');
    assert.match(newest.selector, /^ed-\d{8}-[0-9a-f]{6}$/);
    assert.notEqual(newest.selector, before.selector);
    assert.match(newest.dns_value, /^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(newest.dns_value_chunks, [newest.dns_value]);
    assert.equal(previous.selector, before.selector);
    assert.equal(previous.status, 'retired');
    assert.equal(previous.dns_value, before.dns_value);
    assert.match(previous.retired_at, isoWithOffset);
    assert.equal(after.svc_config.dkim_algorithm, 'ed25519-sha256');
    assert.equal(after.svc_config.dkim_selector, newest.selector);

    const signing = await getActiveSigningKey(domain);
    assert.equal(signing?.selector, newest.selector);
    const signingKeys = await getActiveSigningKeys(domain);
    assert.deepEqual(
      signingKeys.map((key) => key.selector),
      [newest.selector, companion.selector],
    );

    // Rotating again retires the ed25519 key and its companion together; the old keys stay listed.
    await setAlgorithm(token, { domain, algorithm: 'rsa-sha256' });
    const statuses = (await status(token, domain)).body.data.dkim_keys.map(
      (key: { status: string; algorithm: string }) => `${key.algorithm}:${key.status}`,
    );
    assert.deepEqual(statuses, [
      'rsa-sha256:active',
      'ed25519-sha256:retired',
      'rsa-sha256:retired',
      'rsa-sha256:retired',
    ]);
    assert.equal((await getActiveSigningKeys(domain)).length, 1);
  });

  it('gives a domain without a key its first key, and never leaves two active keys under concurrency', async () => {
    const account = uniqueAccount('dkim');
    const domain = uniqueDomain('dkim');
    assert.equal(await putDomain(domain, account), true);
    domains.push(domain);
    const token = await mintToken({ account, scopes: ['domains:read', 'domains:write'] });
    const first = await setAlgorithm(token, { domain, algorithm: 'ed25519-sha256' });
    assert.equal(first.status, 200, first.text);
    assert.equal((await status(token, domain)).body.data.svc_config.dkim_algorithm, 'ed25519-sha256');

    const racing = await Promise.all(
      ['rsa-sha256', 'ed25519-sha256', 'rsa-sha256'].map((algorithm) =>
        setAlgorithm(token, { domain, algorithm }),
      ),
    );
    for (const response of racing) {
      // Each rotation either wins or loses the transaction (code 5, retryable); none half-applies.
      assert.ok(response.status === 200 || response.body.error.code === 5, response.text);
    }
    const algorithms = ['rsa-sha256', 'ed25519-sha256', 'rsa-sha256'];
    const won = algorithms.filter((_, index) => racing[index]?.status === 200);
    assert.ok(won.length >= 1);
    const after = (await status(token, domain)).body.data;
    const active = after.dkim_keys.filter((key: { status: string }) => key.status === 'active');
    // One active key, plus its RSA companion when it is Ed25519: never two sets.
    const primary = active.find(
      (key: { selector: string }) => key.selector === after.svc_config.dkim_selector,
    );
    assert.ok(primary);
    assert.equal(active.length, primary.algorithm === 'ed25519-sha256' ? 2 : 1);
    // Every rotation that won created its keys (two for Ed25519); nothing else was written.
    const created = (algorithm: string) => (algorithm === 'ed25519-sha256' ? 2 : 1);
    assert.equal(after.dkim_keys.length, 2 + won.reduce((sum, algorithm) => sum + created(algorithm), 0));
  });

  it('a dry run checks everything and changes nothing', async () => {
    const { domain, token } = await newDomain();
    const before = (await status(token, domain)).body.data;
    const response = await setAlgorithm(token, { domain, algorithm: 'ed25519-sha256' }, { dry_run: 'true' });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.data.svc_config, {
      dkim_algorithm: 'ed25519-sha256',
      dkim_enabled: true,
    });
    assert.deepEqual((await status(token, domain)).body.data, before);

    const refused = await setAlgorithm(token, { domain, algorithm: 'dsa' }, { dry_run: 'true' });
    assert.equal(refused.body.error.code, 107);
    const foreign = await setAlgorithm(
      token,
      { domain: uniqueDomain('nowhere'), algorithm: 'rsa-sha256' },
      { dry_run: 'true' },
    );
    assert.equal(foreign.body.error.code, 112);
    const statusDryRun = await record(call('GET', statusPath, { token, query: { domain, dry_run: 'true' } }));
    assert.equal(statusDryRun.body.error.code, 114);
  });

  it('signs with rsa-sha256 and verifies with the published record (mailauth)', async () => {
    const { domain, token } = await newDomain();
    const key = activeKey((await status(token, domain)).body);
    publishTxt(key.dns_name, [key.dns_value_chunks]);
    await signAndVerify(domain, 'rsa-sha256');
  });

  it('signs with ed25519-sha256 and verifies with the published record (mailauth)', async () => {
    const { domain, token } = await newDomain();
    await setAlgorithm(token, { domain, algorithm: 'ed25519-sha256' });
    const body = (await status(token, domain)).body;
    const key = activeKey(body);
    assert.equal(key.algorithm, 'ed25519-sha256');
    publishTxt(key.dns_name, [key.dns_value_chunks]);
    await signAndVerify(domain, 'ed25519-sha256');
    // Both active records (the Ed25519 key and its RSA companion) must be published for verified.
    assert.equal((await status(token, domain)).body.data.svc_config.dkim_dns_status, 'pending');
    const companion = body.data.dkim_keys.find(
      (candidate: { status: string; algorithm: string }) =>
        candidate.status === 'active' && candidate.algorithm === 'rsa-sha256',
    );
    publishTxt(companion.dns_name, [companion.dns_value_chunks]);
    assert.equal((await status(token, domain)).body.data.svc_config.dkim_dns_status, 'verified');
  });

  it('never shows private key material in a response or a log line', async () => {
    const { domain, token } = await newDomain();
    await setAlgorithm(token, { domain, algorithm: 'ed25519-sha256' });
    await status(token, domain);
    // Every key of every domain of this file, active and retired, decrypted from the store.
    const pems: string[] = [];
    for (const name of domains) {
      for (const key of await listDkimKeys(name)) pems.push(await openPrivateKey(key));
    }
    assert.ok(pems.length > domains.length);
    const logText = readFileSync(hostInfo().logFile, 'utf8');
    assert.ok(logText.includes('dkim key activated'), 'the log file is the one the service writes');
    assert.ok(seen.length > 5);
    for (const text of [...seen, logText]) {
      assert.ok(!/PRIVATE KEY/.test(text));
      for (const pem of pems) {
        const body = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
        assert.ok(body.length > 40);
        // Any 40-character piece of the key's base64 would give it away.
        for (let start = 0; start + 40 <= body.length; start += 20) {
          assert.ok(!text.includes(body.slice(start, start + 40)), 'no private key piece');
        }
      }
    }
  });
});
