import { scopes as allScopes, type Scope } from '../../platform/auth/scopes.ts';

/** The named sets of scopes a key may be given instead of a list (docs/apikeys.md). */
export const presets = ['full_access', 'sending_access'] as const;
export type Preset = (typeof presets)[number];

/** `sending_access` is `messages:send` alone: such a key reaches message add and batch, nothing else. */
export const sendingAccess: readonly Scope[] = ['messages:send'];

export const scopeNames = Object.keys(allScopes) as Scope[];

/**
 * The scopes a new key gets: the list asked for, or the preset's. `full_access` (also the default)
 * is every scope the creating caller holds: a key never holds more than whoever made it.
 */
export function scopesOfRequest(
  request: { scopes?: readonly string[] | undefined; preset?: Preset | undefined },
  callerScopes: ReadonlySet<string>,
): string[] {
  if (request.scopes !== undefined) return [...new Set(request.scopes)].sort();
  if (request.preset === 'sending_access') return [...sendingAccess];
  // full_access, asked for or by default.
  return scopeNames.filter((scope) => callerScopes.has(scope)).sort();
}

/** The scopes of `wanted` the caller does not hold itself (a key may not be given them: 113). */
export function scopesBeyond(wanted: readonly string[], callerScopes: ReadonlySet<string>): string[] {
  return wanted.filter((scope) => !callerScopes.has(scope));
}
