import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { authConfig } from '../config/auth.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import { VerifiedTokens } from './verified-tokens.ts';

export interface VerifiedToken {
  subject: string;
  account: string;
  scopes: Set<string>;
}

// Module scope: the key set is fetched once and cached across invocations; an unknown kid makes
// jose refetch (rate-limited by its cooldown), so a rotated key is picked up without a restart.
const keySet =
  authConfig.jwksUrl === undefined
    ? undefined
    : createRemoteJWKSet(new URL(authConfig.jwksUrl), {
        timeoutDuration: authConfig.jwksTimeoutMs,
        cooldownDuration: authConfig.jwksCooldownMs,
        cacheMaxAge: 10 * 60_000,
      });

export function scopesOf(payload: JWTPayload): Set<string> {
  const scopes = new Set<string>();
  if (typeof payload.scope === 'string')
    for (const scope of payload.scope.split(' ')) if (scope) scopes.add(scope);
  if (Array.isArray(payload.scp))
    for (const scope of payload.scp) if (typeof scope === 'string') scopes.add(scope);
  return scopes;
}

/**
 * Tokens that passed verification, for at most 5 minutes (API Gateway's default for a Lambda
 * authorizer's cached answer) and never past their `exp`; at most 1,000 per function instance.
 */
const verified = new VerifiedTokens<VerifiedToken>(5 * 60_000, 1_000);

/**
 * Verifies a compact JWT: signature against the JWKS, pinned asymmetric algorithms, issuer,
 * audience, `exp` required. Expired or not-yet-valid → 105; anything else wrong → 110. A token
 * this instance verified before is answered from `verified` until its `exp` (checked on every
 * call) or for 5 minutes, whichever comes first; the account's status is checked by the caller on
 * every request either way (bearer-auth.ts).
 */
export async function verifyToken(token: string, now = Date.now()): Promise<VerifiedToken> {
  const known = verified.get(token, now);
  if (known !== undefined) return known;
  const { claims, expiresAt } = await verifySignature(token);
  verified.set(token, claims, expiresAt, now);
  return claims;
}

async function verifySignature(token: string): Promise<{ claims: VerifiedToken; expiresAt: number }> {
  if (keySet === undefined || authConfig.issuer === undefined || authConfig.audience === undefined) {
    throw new ServiceError(Code.ValidationUnavailable, 'Token verification is not configured');
  }
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySet, {
      issuer: authConfig.issuer,
      audience: authConfig.audience,
      algorithms: authConfig.algorithms,
      requiredClaims: ['exp'],
      clockTolerance: authConfig.clockToleranceSeconds,
      ...(authConfig.requiredTyp === undefined ? {} : { typ: authConfig.requiredTyp }),
    }));
  } catch (error) {
    throw mapVerificationError(error);
  }
  if (authConfig.requiredTokenUse !== undefined && payload.token_use !== authConfig.requiredTokenUse) {
    throw new ServiceError(Code.TokenInvalid, `Token is not an ${authConfig.requiredTokenUse} token`);
  }
  const account = payload[authConfig.accountClaim];
  if (typeof account !== 'string' || account.length === 0 || account.length > 256) {
    throw new ServiceError(Code.TokenInvalid, 'Token names no account');
  }
  const claims = {
    subject: typeof payload.sub === 'string' ? payload.sub : account,
    account,
    scopes: scopesOf(payload),
  };
  // jose required `exp` and checked that it is a number.
  return { claims, expiresAt: (payload.exp as number) * 1000 };
}

function mapVerificationError(error: unknown): ServiceError {
  if (error instanceof joseErrors.JWTExpired) {
    return new ServiceError(Code.TokenExpired, 'Token has expired', { cause: error });
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'nbf') {
    return new ServiceError(Code.TokenExpired, 'Token is not yet valid', { cause: error });
  }
  if (error instanceof joseErrors.JWKSTimeout || isFetchFailure(error)) {
    return new ServiceError(Code.ValidationUnavailable, 'Identity provider keys are unreachable', {
      cause: error,
    });
  }
  return new ServiceError(Code.TokenInvalid, 'Token is invalid', { cause: error });
}

function isFetchFailure(error: unknown): boolean {
  if (error instanceof joseErrors.JOSEError) return false;
  return (
    error instanceof TypeError || (error instanceof Error && /fetch|ECONNREFUSED|socket/i.test(error.message))
  );
}
