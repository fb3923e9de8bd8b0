import type { ConsoleSite } from './console-site.ts';
import { consoleClientId } from './identity.ts';

/**
 * Whom the local console signs in with. With `AUTH_ISSUER` set the API trusts only that issuer, so
 * the console must sign in there too (as the client `CONSOLE_CLIENT_ID`), or the API refuses its
 * tokens; the built-in identity provider serves the console only when no issuer is configured.
 * The account claim is the API's too, so the console names the account the API acts for.
 */
export function consoleSignIn(environment: NodeJS.ProcessEnv, builtInIssuer: string): ConsoleSite {
  const configured = nonEmpty(environment.AUTH_ISSUER);
  return {
    issuer: configured ?? builtInIssuer,
    clientId: nonEmpty(environment.CONSOLE_CLIENT_ID) ?? consoleClientId,
    accountClaim: nonEmpty(environment.AUTH_ACCOUNT_CLAIM) ?? 'sub',
    builtIn: configured === undefined,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
