/**
 * Names the local identity provider and the tools around it share, in a module that loads nothing
 * (the admin command imports it without starting an OpenID provider).
 */

/** The audience (`aud`) of every local token, which the local host's AUTH_AUDIENCE expects. */
export const localAudience = 'svc-mail';

/**
 * The resource indicator (RFC 8707) of the API at the local provider: an authorization request
 * without `resource` gets it by default, and its access tokens carry `localAudience`.
 */
export const localResource = 'urn:svc-mail:api';

/** The web console's OpenID client at the local provider (public client: PKCE, no secret). */
export const consoleClientId = 'svc-mail-console';
