/**
 * The account the API acts for: the configured account claim (the API's `AUTH_ACCOUNT_CLAIM`) of
 * the access token, which is what the API reads, or of the ID token when the access token is not a
 * JWT the console can read. Never the ID token's `sub` in its place: with another account claim,
 * `sub` names the person, not the account whose data the console shows.
 */
export function accountOf(
  accessToken: string,
  idTokenClaims: Readonly<Record<string, unknown>> | undefined,
  claim: string,
): string | undefined {
  const fromAccessToken = jwtPayload(accessToken)?.[claim];
  if (isAccount(fromAccessToken)) return fromAccessToken;
  const fromIdToken = idTokenClaims?.[claim];
  return isAccount(fromIdToken) ? fromIdToken : undefined;
}

function isAccount(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * The payload of a JWT, read without checking its signature: the console only shows it, the API
 * verifies every token it is sent. Undefined for anything that is not a JWT (an opaque token).
 */
function jwtPayload(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const base64 = (parts[1] as string).replace(/-/g, '+').replace(/_/g, '/');
    const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
    const payload: unknown = JSON.parse(new TextDecoder().decode(bytes));
    return typeof payload === 'object' && payload !== null && !Array.isArray(payload)
      ? (payload as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
