import assert from 'node:assert/strict';
import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  createSign,
  type JsonWebKey as NodeJsonWebKey,
  randomUUID,
} from 'node:crypto';
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair, importJWK, type JWK, type JWTPayload, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { setAccountActive } from '../../shared/platform/auth/account-store.ts';
import {
  type ApiResponse,
  call,
  hasNoInternals,
  mintToken,
  uniqueAccount,
  useHostEnvironment,
} from '../support/host.ts';

/*
 * Bearer authentication through the gateway against the local identity provider's JWKS over HTTP.
 * The route is POST /keepalive-1.0 (scope keepalive:run): its chain authenticates before the
 * action runs, so every rejection below comes from the shared chain, not from the handler.
 */
const info = useHostEnvironment();
const route = { method: 'POST', path: '/keepalive-1.0', scope: 'keepalive:run' } as const;

const now = () => Math.floor(Date.now() / 1000);
const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

function claims(overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: info.issuer,
    aud: info.audience,
    sub: uniqueAccount('jwt'),
    scope: route.scope,
    iat: now(),
    exp: now() + 600,
    ...overrides,
  };
}

/** Signs with the identity provider's own key and kid unless told otherwise. */
type SigningKey = Parameters<SignJWT['sign']>[0];

async function signed(payload: JWTPayload, header: Record<string, unknown> = {}, key?: SigningKey) {
  const signingKey = key ?? (await importJWK(info.privateJwk, 'RS256'));
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'RS256', kid: info.privateJwk.kid as string, typ: 'JWT', ...header })
    .sign(signingKey);
}

async function send(
  token: string | undefined,
  headers: Record<string, string> = {},
): Promise<ApiResponse<any>> {
  return call(route.method, route.path, token === undefined ? { headers } : { token, headers });
}

function expectRejected(response: ApiResponse<any>, status: number, code: number): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.error.code, code, response.text);
  assert.ok(response.headers.get('x-request-id'));
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.ok(hasNoInternals(response.text), response.text);
}

/** Sends `token` until it is refused or `withinMs` passes; the last answer. */
async function sendUntilRefused(token: string, withinMs: number): Promise<ApiResponse<any>> {
  return vi.waitFor(
    async () => {
      const response = await send(token);
      assert.notEqual(response.status, 200, `still accepted: ${response.text}`);
      return response;
    },
    { timeout: withinMs, interval: 250 },
  );
}

// A server that must never be contacted: it stands for an attacker's key URL in a `jku` header.
let attackerHits = 0;
const attacker = createServer((_request, response) => {
  attackerHits += 1;
  response.writeHead(404).end();
});
beforeAll(() => new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve)));
afterAll(() => new Promise<void>((resolve) => attacker.close(() => resolve())));

describe('bearer authentication', () => {
  it('accepts a valid token (the baseline every rejection below differs from)', async () => {
    const response = await send(await signed(claims()));
    assert.equal(response.status, 200, response.text);
    const array = await send(await signed(claims({ scope: undefined, scp: [route.scope] })));
    assert.equal(array.status, 200, `scopes as an scp array: ${array.text}`);
  });

  // 104 (no header, a blank one) and 110 to a header that is not a Bearer token are answered before
  // any verification: test/unit/http-chain.test.ts calls the handler with an event.
  it('answers 110 to a Bearer token that is not a JWT', async () => {
    expectRejected(await send('not-a-jwt'), 401, 110);
    expectRejected(await send('a.b.c'), 401, 110);
  });

  it('answers 105 to an expired token and to one not yet valid', async () => {
    const expired = await send(await signed(claims({ iat: now() - 7200, exp: now() - 3600 })));
    expectRejected(expired, 401, 105);
    assert.match(expired.body.error.message, /expired/);
    const early = await send(await signed(claims({ nbf: now() + 3600 })));
    expectRejected(early, 401, 105);
    assert.match(early.body.error.message, /not yet valid/);
  });

  it('answers 110 to alg "none"', async () => {
    const token = `${segment({ alg: 'none', typ: 'JWT' })}.${segment(claims())}.`;
    expectRejected(await send(token), 401, 110);
    const noneWithKid = `${segment({ alg: 'none', kid: info.privateJwk.kid })}.${segment(claims())}.`;
    expectRejected(await send(noneWithKid), 401, 110);
  });

  it('answers 110 to HS256 signed with the RSA public key as the secret (key confusion)', async () => {
    const publicJwk = {
      kty: info.privateJwk.kty,
      n: info.privateJwk.n,
      e: info.privateJwk.e,
    } as NodeJsonWebKey;
    const pem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    for (const secret of [String(pem), JSON.stringify(publicJwk)]) {
      const input = `${segment({ alg: 'HS256', typ: 'JWT', kid: info.privateJwk.kid })}.${segment(claims())}`;
      const signature = createHmac('sha256', secret).update(input).digest('base64url');
      expectRejected(await send(`${input}.${signature}`), 401, 110);
    }
  });

  it('answers 110 to an unknown kid and to a foreign key under the known kid', async () => {
    expectRejected(await send(await signed(claims(), { kid: `unknown-${randomUUID()}` })), 401, 110);
    const { privateKey } = await generateKeyPair('RS256');
    expectRejected(await send(await signed(claims(), {}, privateKey)), 401, 110);
  });

  it('ignores keys the token brings along (jwk and jku headers) and answers 110', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const embedded = { ...(await exportJWK(publicKey)), alg: 'RS256' } as JWK;
    expectRejected(
      await send(await signed(claims(), { kid: undefined, jwk: embedded }, privateKey)),
      401,
      110,
    );
    expectRejected(await send(await signed(claims(), { jwk: embedded }, privateKey)), 401, 110);
    const address = attacker.address();
    const jku = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks.json`;
    expectRejected(await send(await signed(claims(), { kid: 'attacker', jku }, privateKey)), 401, 110);
    assert.equal(attackerHits, 0, 'the service never fetches a key URL named by the token');
  });

  it('answers 110 to x5u/x5c headers, an unknown crit header, a tampered payload and a swapped alg', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const address = attacker.address();
    const x5u = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/cert.pem`;
    const spki = Buffer.from(
      createPublicKey({ key: (await exportJWK(publicKey)) as NodeJsonWebKey, format: 'jwk' }).export({
        type: 'spki',
        format: 'der',
      }),
    ).toString('base64');
    expectRejected(await send(await signed(claims(), { kid: 'attacker', x5u }, privateKey)), 401, 110);
    expectRejected(await send(await signed(claims(), { x5c: [spki] }, privateKey)), 401, 110);
    assert.equal(attackerHits, 0, 'the service never fetches a certificate URL named by the token');
    // RFC 7515 4.1.11: an extension the verifier does not understand must be refused.
    // (jose will not sign it, so it is signed by hand with the identity provider's own key.)
    const critInput = `${segment({ alg: 'RS256', typ: 'JWT', kid: info.privateJwk.kid, crit: ['x-unknown'], 'x-unknown': true })}.${segment(claims())}`;
    const critSignature = createSign('RSA-SHA256')
      .update(critInput)
      .sign(createPrivateKey({ key: info.privateJwk as NodeJsonWebKey, format: 'jwk' }))
      .toString('base64url');
    expectRejected(await send(`${critInput}.${critSignature}`), 401, 110);
    // A valid signature over other claims: the payload is swapped for one naming another account.
    const [header, , signature] = (await signed(claims())).split('.');
    const forged = `${header}.${segment(claims({ sub: 'someone-else', scope: 'keepalive:run messages:read' }))}.${signature}`;
    expectRejected(await send(forged), 401, 110);
    // The header claims another algorithm than the key's (RS256 signature labelled PS256 / RS512).
    for (const alg of ['PS256', 'RS512']) {
      const [, payload, rsSignature] = (await signed(claims())).split('.');
      const relabelled = `${segment({ alg, typ: 'JWT', kid: info.privateJwk.kid })}.${payload}.${rsSignature}`;
      expectRejected(await send(relabelled), 401, 110);
    }
    // A kid that tries a path or an injection is only a lookup key: unknown, 110.
    for (const kid of ['../../../../etc/passwd', "' OR '1'='1", 'x'.repeat(5000)]) {
      expectRejected(await send(await signed(claims(), { kid })), 401, 110);
    }
  });

  it('answers 110 to the wrong issuer, the wrong audience, a missing exp or a missing account', async () => {
    expectRejected(await send(await signed(claims({ iss: 'https://evil.example' }))), 401, 110);
    expectRejected(await send(await signed(claims({ aud: 'another-api' }))), 401, 110);
    expectRejected(await send(await signed(claims({ exp: undefined }))), 401, 110);
    const noAccount = await send(await signed(claims({ sub: undefined })));
    expectRejected(noAccount, 401, 110);
    assert.match(noAccount.body.error.message, /account/);
  });

  it('refuses a token it accepted before once the token expires (105): exp is checked on every request', async () => {
    const token = await signed(claims({ exp: now() + 2 }));
    assert.equal((await send(token)).status, 200);
    // The verified-token cache answers until exp; past it the token is verified again, with the
    // configured clock tolerance (5 s), and refused.
    expectRejected(await sendUntilRefused(token, 60_000), 401, 105);
  });

  it('refuses a token it accepted before once its account is disabled (110)', async () => {
    const account = uniqueAccount('later-off');
    const token = await mintToken({ account, scopes: [route.scope] });
    assert.equal((await send(token)).status, 200);
    await setAccountActive(account, false);
    // The account's status is read on every request (cached for 30 s), whatever the token cache holds.
    const response = await sendUntilRefused(token, 100_000);
    expectRejected(response, 401, 110);
    assert.match(response.body.error.message, /disabled/);
  });

  it('answers 110 to a valid token of a disabled account', async () => {
    const account = uniqueAccount('off');
    await setAccountActive(account, false);
    const response = await send(await mintToken({ account, scopes: [route.scope] }));
    expectRejected(response, 401, 110);
    assert.match(response.body.error.message, /disabled/);
  });

  it('answers 113 when the token lacks the route scope', async () => {
    const response = await send(await mintToken({ account: uniqueAccount(), scopes: ['messages:read'] }));
    expectRejected(response, 403, 113);
    assert.match(response.body.error.message, /keepalive:run/);
    expectRejected(await send(await signed(claims({ scope: undefined }))), 403, 113);
  });
});
