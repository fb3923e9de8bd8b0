import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type ApiResponse, call, hasNoInternals, mintToken, uniqueAccount } from '../support/host.ts';
import { callFrom, type SecondaryHost, startSecondaryHost } from '../support/secondary-host.ts';

/*
 * Codes that need a host configured differently from the shared one: the network rule (103) on the
 * gateway's view of the TCP peer, the rate limit (115) of a verified account, and the infrastructure
 * faults 2/3/4 on an authenticated route, whose Bearer auth reads the account record from DynamoDB
 * before any action runs. Two secondary hosts:
 *   A: blocks 127.0.0.2, allows 2 requests per caller and never refills, and takes its keys from a
 *      JWKS server in this test process (refetched on any unknown kid), which later publishes a
 *      rotated key; later its table is deleted (3), then its DynamoDB Local is killed (4);
 *   B: its database endpoint is a plain HTTP server that answers garbage (2), and its keys come from
 *      a JWKS server in this test process, which the last test stops (7).
 * The chain's own answers (103 for IPv4 and IPv6 networks, 115 by address for anonymous callers and
 * failed authentications, code 2 and its log lines) are unit tests with an event and no server:
 * test/unit/http-chain.test.ts.
 */
const protectedRoute = { method: 'POST', path: '/keepalive-1.0', scope: 'keepalive:run' } as const;

let hostA: SecondaryHost;
let hostB: SecondaryHost;
let garbage: Server;
let jwks: Server;
let jwksA: Server;
/** What host A's key server publishes; the rotation test adds a key. */
const keysA: JWK[] = [];
const issuerB = 'https://issuer-b.example';

function expectError(response: ApiResponse<any>, status: number, code: number): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.error.code, code, response.text);
  assert.ok(response.headers.get('x-request-id'));
  assert.ok(hasNoInternals(response.text), response.text);
}

async function tokenFor(host: SecondaryHost, account = uniqueAccount('fault')): Promise<string> {
  const issuer = host.env.AUTH_ISSUER ?? host.issuer;
  return mintToken({ account, scopes: [protectedRoute.scope], signer: { ...host, issuer } });
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

/** An RS256 key pair whose private half a host's identity provider signs with (placed in its DATA_DIR). */
async function hostKeyPair(prefix: string): Promise<{ publicJwk: JWK; privateJwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `${prefix}-${randomUUID().slice(0, 8)}`;
  return {
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' },
    privateJwk: { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' },
  };
}

function keyServer(keys: () => JWK[]): Server {
  return createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: keys() }));
  });
}

function placeSigningKey(privateJwk: JWK): (dataDir: string) => void {
  return (dataDir) => {
    mkdirSync(join(dataDir, 'idp'));
    writeFileSync(join(dataDir, 'idp', 'signing-key.json'), JSON.stringify(privateJwk));
  };
}

beforeAll(async () => {
  // Both hosts' signing keys are made here and placed in their DATA_DIRs, so this process can serve
  // their key sets: host A's gains a key later (rotation), host B's goes away (code 7).
  const keyA = await hostKeyPair('a');
  keysA.push(keyA.publicJwk);
  jwksA = keyServer(() => keysA);
  const jwksAPort = await listen(jwksA);
  const keyB = await hostKeyPair('b');
  jwks = keyServer(() => [keyB.publicJwk]);
  const jwksPort = await listen(jwks);
  garbage = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/html' }).end('<html>no</html>'));
  });
  const garbagePort = await listen(garbage);
  [hostA, hostB] = await Promise.all([
    startSecondaryHost(
      {
        BLOCKED_CIDRS: '127.0.0.2/32,10.0.0.0/8',
        RATE_LIMIT_RPS: '0',
        RATE_LIMIT_BURST: '2',
        AUTH_JWKS_URL: `http://127.0.0.1:${jwksAPort}/jwks.json`,
        AUTH_JWKS_COOLDOWN_MS: '0',
      },
      placeSigningKey(keyA.privateJwk),
    ),
    startSecondaryHost(
      {
        AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${garbagePort}`,
        AUTH_JWKS_URL: `http://127.0.0.1:${jwksPort}/jwks.json`,
        AUTH_ISSUER: issuerB,
        AUTH_JWKS_COOLDOWN_MS: '0',
      },
      placeSigningKey(keyB.privateJwk),
    ),
  ]);
});

afterAll(async () => {
  await Promise.all([hostA?.stop(), hostB?.stop()]);
  await new Promise<void>((resolve) => garbage.close(() => resolve()));
  await new Promise<void>((resolve) => jwksA.close(() => resolve()));
  if (jwks.listening) await new Promise<void>((resolve) => jwks.close(() => resolve()));
});

describe('network rule, rate limit and key rotation (secondary host A)', () => {
  it('answers 103 to a caller inside BLOCKED_CIDRS, before anything else, and serves the others', async () => {
    const blocked = await callFrom('127.0.0.2', hostA.url, 'GET', '/health');
    expectError(blocked, 401, 103);
    assert.equal(blocked.headers.get('ratelimit-limit'), null, 'the network rule runs before the rate limit');

    const allowed = await call('GET', '/health', { baseUrl: hostA.url, token: `not-a-jwt-${randomUUID()}` });
    assert.equal(allowed.status, 200, allowed.text);
    assert.equal(allowed.body.data.caller_ip, '127.0.0.1');
  });

  it('answers 115 with Retry-After and RateLimit-* once an account has used its burst', async () => {
    const token = await tokenFor(hostA);
    const first = await call(protectedRoute.method, protectedRoute.path, { baseUrl: hostA.url, token });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers.get('ratelimit-limit'), '2');
    assert.equal(first.headers.get('ratelimit-remaining'), '1');
    // Another token of the same account draws from the same bucket: the key is the verified account.
    const sameAccount = await mintToken({
      account: JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).sub,
      scopes: [protectedRoute.scope],
      signer: { ...hostA, issuer: hostA.env.AUTH_ISSUER ?? hostA.issuer },
      claims: { jti: randomUUID() },
    });
    const second = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: sameAccount,
    });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('ratelimit-remaining'), '0');

    const third = await call(protectedRoute.method, protectedRoute.path, { baseUrl: hostA.url, token });
    expectError(third, 429, 115);
    assert.ok(Number(third.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal(third.headers.get('ratelimit-limit'), '2');
    assert.equal(third.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(third.headers.get('ratelimit-reset')) >= 1);

    const otherCaller = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await tokenFor(hostA),
    });
    assert.equal(otherCaller.status, 200, 'the bucket is per account');
  });

  it('accepts a key published later under a new kid without a restart (JWKS rotation)', async () => {
    const before = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await tokenFor(hostA),
    });
    assert.equal(before.status, 200, `the current key works: ${before.text}`);

    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const kid = `rotated-${randomUUID().slice(0, 8)}`;
    const sign = (account: string) =>
      new SignJWT({ scope: protectedRoute.scope })
        .setProtectedHeader({ alg: 'ES256', kid })
        .setIssuer(hostA.issuer)
        .setAudience(hostA.audience)
        .setSubject(account)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey);

    const unpublished = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await sign(uniqueAccount('rot')),
    });
    expectError(unpublished, 401, 110);

    // The provider publishes the new key next to the current one, as OpenID providers rotate.
    keysA.push({ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' });

    const rotated = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await sign(uniqueAccount('rot')),
    });
    assert.equal(rotated.status, 200, rotated.text);
  });
});

describe('infrastructure faults on an authenticated route', () => {
  it('answers 3 when the table does not exist (secondary host A, table deleted)', async () => {
    const admin = new DynamoDBClient({
      endpoint: hostA.dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    await admin.send(new DeleteTableCommand({ TableName: hostA.env.TABLE_NAME }));
    admin.destroy();

    const response = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await tokenFor(hostA),
    });
    expectError(response, 503, 3);
  });

  it('answers 4 when DynamoDB is unreachable (secondary host A, DynamoDB Local killed)', async () => {
    await hostA.killDynamo();
    const response = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostA.url,
      token: await tokenFor(hostA),
    });
    expectError(response, 503, 4);
  });

  it('answers 2 with only the request id when the database answers garbage (secondary host B)', async () => {
    const response = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostB.url,
      token: await tokenFor(hostB),
    });
    expectError(response, 500, 2);
    const requestId = response.headers.get('x-request-id') ?? '';
    assert.match(response.body.error.message, new RegExp(requestId));
    assert.deepEqual(Object.keys(response.body.error).sort(), ['code', 'message']);

    const logged = readFileSync(join(hostB.dataDir, 'service.log'), 'utf8')
      .split('\n')
      .filter((line) => line.includes(requestId))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.ok(
      logged.some((line) => line.level === 'ERROR'),
      'the unexpected error is logged with the request id',
    );
    assert.ok(logged.some((line) => line.message === 'request' && line.code === 2));
  });

  it('answers 7 (HTTP 503), not 110, when the identity provider keys cannot be fetched (secondary host B)', async () => {
    jwks.closeAllConnections();
    await new Promise<void>((resolve) => jwks.close(() => resolve()));
    // A kid the cached key set lacks makes the verifier fetch the keys again, which now fails.
    const response = await call(protectedRoute.method, protectedRoute.path, {
      baseUrl: hostB.url,
      token: await mintToken({
        account: uniqueAccount('jwks'),
        scopes: [protectedRoute.scope],
        signer: { ...hostB, issuer: issuerB, privateJwk: { ...hostB.privateJwk, kid: 'rotated-away' } },
      }),
    });
    expectError(response, 503, 7);
  });
});
