import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks v1 signatures (the `standardwebhooks` package): `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` per secret; several are joined with spaces (after a rotation the
 * new and the previous secret both sign, so receivers may switch at their own pace).
 */
export function signatureHeader(secrets: readonly string[], id: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
}

/** The request headers of one delivery attempt. */
export function deliveryHeaders(
  secrets: readonly string[],
  id: string,
  at: Date,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'svc-mail-webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, id, at, body),
  };
}
