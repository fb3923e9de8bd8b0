/**
 * What the console's host and the console agree on: the shape of `config.json` (written by the
 * local gateway and, on AWS, deployed beside the built files) and the security headers the console
 * is served with (the local gateway and CloudFront's response headers policy). Pure data: the
 * browser bundle, the local host and the CDK stack import it.
 */

export interface ConsoleConfig {
  /** Base URL of the API, absolute or relative to the console's page (`/` locally: same origin). */
  api_url: string;
  /** The OpenID issuer; its discovery document names the authorization and token endpoints. */
  issuer: string;
  client_id: string;
  /**
   * Resource indicator (RFC 8707) sent with the authorization and token requests, for providers
   * that need one to issue an access token for the API; left out when unset.
   */
  resource?: string;
  /**
   * The token claim that names the account the API acts for (the API's `AUTH_ACCOUNT_CLAIM`), so the
   * console shows that account as "signed in as"; `sub` when left out.
   */
  account_claim?: string;
}

/** The scopes the console asks for: `openid` and every scope a page of the console uses. */
export const consoleScopes = [
  'openid',
  'messages:send',
  'messages:read',
  'messages:read_content',
  'domains:read',
  'domains:write',
  'suppressions:read',
  'suppressions:write',
  'webhooks:read',
  'webhooks:write',
  'templates:read',
  'templates:write',
  'keys:read',
  'keys:write',
] as const;

export interface PolicyOptions {
  /** Origins the console may call besides its own: the API (when elsewhere) and the issuer. */
  connect: readonly string[];
  /**
   * Whether images the user asks to load in a message preview may come over plain http (the local
   * host); on AWS only https images are allowed (an https page blocks mixed content anyway).
   */
  allowHttpImages: boolean;
}

/**
 * The console's Content-Security-Policy. Scripts only from its own origin (no inline script, no
 * eval); connections only to itself, the API and the issuer; no plugins, no framing by others.
 * The HTML preview is an `about:srcdoc` frame, which inherits this policy and adds its own
 * stricter one, so inline styles (which mail is made of) and remote images (which the preview
 * loads only when asked) must be allowed here: neither can run code.
 */
export function consoleContentSecurityPolicy({ connect, allowHttpImages }: PolicyOptions): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: https:${allowHttpImages ? ' http:' : ''}`,
    "font-src 'self' data:",
    `connect-src 'self' ${[...new Set(connect)].join(' ')}`.trim(),
    "frame-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers of every console response (the local gateway; CloudFront sets the same ones). */
export function consoleSecurityHeaders(options: PolicyOptions): Record<string, string> {
  return {
    'content-security-policy': consoleContentSecurityPolicy(options),
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
  };
}
