/**
 * Whether a POST body is the one-click request of RFC 8058 section 3.1: `List-Unsubscribe=One-Click`,
 * form-encoded (`application/x-www-form-urlencoded`, what Gmail and Yahoo send) or as a field of
 * `multipart/form-data`, which the RFC also allows.
 */
export function isOneClickBody(body: string | null, contentType: string | undefined): boolean {
  if (body === null) return false;
  const type = (contentType ?? '').toLowerCase();
  if (type.startsWith('multipart/form-data')) {
    return /name="?List-Unsubscribe"?\r?\n\r?\nOne-Click\r?\n/i.test(body);
  }
  return new URLSearchParams(body.trim()).get('List-Unsubscribe') === 'One-Click';
}
