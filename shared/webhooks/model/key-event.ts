import type { KeyChange } from '../../apikeys/index.ts';
import { eventIdOf } from '../../messages/index.ts';
import { apiKeyPrefix } from '../../platform/auth/api-key-format.ts';

/**
 * A `key.created`, `key.rotated` or `key.revoked` event (docs/apikeys.md): the key's id, name and
 * prefix, never its secret. Pure.
 */
export function keyEvent(
  change: KeyChange,
  formatDate: (iso: string) => string,
): { id: string; body: string } {
  const { snapshot } = change;
  return {
    id: eventIdOf([snapshot.keyId, change.type, change.at]),
    body: JSON.stringify({
      type: change.type,
      timestamp: formatDate(change.at),
      data: { key_id: snapshot.keyId, name: snapshot.name, prefix: `${apiKeyPrefix}${snapshot.keyId}` },
    }),
  };
}
