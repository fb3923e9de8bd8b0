import { envList, envNumber, envString } from './env.ts';

/** Identity-provider settings; read once when an authenticated function starts. */
export const authConfig = {
  issuer: envString('AUTH_ISSUER'),
  audience: envString('AUTH_AUDIENCE'),
  jwksUrl: envString('AUTH_JWKS_URL'),
  accountClaim: envString('AUTH_ACCOUNT_CLAIM', 'sub') as string,
  algorithms:
    envList('AUTH_ALGORITHMS').length > 0 ? envList('AUTH_ALGORITHMS') : ['RS256', 'ES256', 'EdDSA'],
  clockToleranceSeconds: envNumber('AUTH_CLOCK_TOLERANCE_SECONDS', 5),
  /**
   * When set, the token's `typ` header must be this (e.g. `at+jwt`, RFC 9068 access tokens), so an
   * ID token of the same issuer and audience cannot stand in for an access token. Off by default.
   */
  requiredTyp: envString('AUTH_REQUIRED_TYP'),
  /** When set, the `token_use` claim must be this (Amazon Cognito: `access`). Off by default. */
  requiredTokenUse: envString('AUTH_REQUIRED_TOKEN_USE'),
  jwksTimeoutMs: envNumber('AUTH_JWKS_TIMEOUT_MS', 3000, { min: 100 }),
  /** Least time between two JWKS fetches triggered by an unknown `kid` (jose's cooldown). */
  jwksCooldownMs: envNumber('AUTH_JWKS_COOLDOWN_MS', 30_000, { min: 0 }),
};

const asymmetric = /^(RS|PS|ES)(256|384|512)$|^EdDSA$|^ES256K$/;
for (const algorithm of authConfig.algorithms) {
  if (!asymmetric.test(algorithm)) {
    throw new Error(`AUTH_ALGORITHMS may list only asymmetric algorithms, got "${algorithm}"`);
  }
}
