import { createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { authConfig } from '../config/auth.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';

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
 * Verifies a compact JWT: signature against the JWKS, pinned asymmetric algorithms, issuer,
 * audience, `exp` required. Expired or not-yet-valid → 105; anything else wrong → 110.
 */
export async function verifyToken(token: string): Promise<VerifiedToken> {
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
  return {
    subject: typeof payload.sub === 'string' ? payload.sub : account,
    account,
    scopes: scopesOf(payload),
  };
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
