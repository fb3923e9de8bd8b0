import type { Adapter, AdapterPayload } from 'oidc-provider';

/**
 * The local identity provider's storage for its sessions, interactions, codes and grants: in
 * memory, one store per provider, entries dropped when they expire. On purpose: the local provider
 * is development tooling, and a restart only signs the user out of it (the console signs in again
 * in one click). Tokens are JWTs and need no storage to be verified.
 */
interface Entry {
  payload: AdapterPayload;
  expiresAt: number;
}

export function memoryAdapterFactory(): (model: string) => Adapter {
  const entries = new Map<string, Entry>();
  const byGrant = new Map<string, Set<string>>();
  const now = () => Math.floor(Date.now() / 1000);

  const read = (key: string | undefined): AdapterPayload | undefined => {
    if (key === undefined) return undefined;
    const entry = entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry.payload;
  };

  const sweep = () => {
    for (const [key, entry] of entries) if (entry.expiresAt <= now()) entries.delete(key);
    for (const [grantId, keys] of byGrant) {
      for (const key of keys) if (!entries.has(key)) keys.delete(key);
      if (keys.size === 0) byGrant.delete(grantId);
    }
  };

  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      upsert: async (id, payload, expiresIn) => {
        if (entries.size % 500 === 499) sweep();
        // Models without an expiry (none the console's flow stores) are kept for a day.
        const expiresAt = now() + (expiresIn ?? 86_400);
        entries.set(key(id), { payload, expiresAt });
        if (payload.grantId !== undefined) {
          const keys = byGrant.get(payload.grantId) ?? new Set<string>();
          keys.add(key(id));
          byGrant.set(payload.grantId, keys);
        }
        const pointer = { payload: { id } as AdapterPayload, expiresAt };
        if (payload.uid !== undefined) entries.set(`${model}:uid:${payload.uid}`, pointer);
        if (payload.userCode !== undefined) entries.set(`${model}:code:${payload.userCode}`, pointer);
      },
      find: async (id) => read(key(id)),
      findByUid: async (uid) => read(key(String(read(`${model}:uid:${uid}`)?.id))),
      findByUserCode: async (userCode) => read(key(String(read(`${model}:code:${userCode}`)?.id))),
      consume: async (id) => {
        const payload = read(key(id));
        if (payload !== undefined) payload.consumed = now();
      },
      destroy: async (id) => {
        entries.delete(key(id));
      },
      revokeByGrantId: async (grantId) => {
        for (const grantKey of byGrant.get(grantId) ?? []) entries.delete(grantKey);
        byGrant.delete(grantId);
      },
    };
  };
}
