export {
  deriveKeyChanges,
  type KeyChange,
  type KeyEventType,
  keyEventTypes,
  keySnapshotOf,
} from './model/key-events.ts';
export { presets, sendingAccess } from './model/scopes.ts';
