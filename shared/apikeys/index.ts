export { sendableDomainsOf } from './account-domains.ts';
export { presets, sendingAccess } from './model/scopes.ts';
