export { getActiveSigningKeys, getSigningKeysBySelector } from './signing-keys.ts';
