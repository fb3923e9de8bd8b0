export { applySuppressions, hardBouncesOf, type Suppression } from './model/suppressions.ts';
export { parseSuppressedAddress } from './schemas.ts';
export { suppressAutomatically, suppressedRecipients, suppressUnsubscribed } from './suppressions.ts';
