import { keyPrefixOf } from '../../platform/auth/api-key-format.ts';
import { formatDate } from '../../platform/time/format.ts';

/** A key as the API shows it (DESIGN 4c, "Key view"): never the secret nor its digest. */
export interface KeyView {
  key_id: string;
  name: string;
  prefix: string;
  last4: string;
  scopes: string[];
  domains: string[];
  allowed_cidrs: string[];
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];

const dateOrNull = (value: unknown): string | null => (typeof value === 'string' ? formatDate(value) : null);

export function toKeyView(item: Record<string, unknown>): KeyView {
  const keyId = String(item.key_id);
  return {
    key_id: keyId,
    name: String(item.name),
    prefix: keyPrefixOf(keyId),
    last4: String(item.last4),
    scopes: strings(item.scopes),
    domains: strings(item.domains),
    allowed_cidrs: strings(item.allowed_cidrs),
    created_at: formatDate(String(item.created_at)),
    expires_at: dateOrNull(item.expires_at),
    last_used_at: dateOrNull(item.last_used_at),
    revoked_at: dateOrNull(item.revoked_at),
  };
}
