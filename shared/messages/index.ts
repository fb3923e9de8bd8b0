export { deliverySettings, firstWatchAt } from './config.ts';
export {
  deriveChanges,
  eventIdOf,
  type MessageChange,
  type MessageEventType,
  type MessageLabels,
  type MessageSnapshot,
  messageEventTypes,
  reportedStatus,
} from './model/changes.ts';
export { messageUuidTag } from './model/labels.ts';
export {
  type ContentBodies,
  clipDetail,
  type HistoryEntry,
  type MessageItem,
  objectKeys,
  partsAt,
  recipientEntry,
  type StoredAttachment,
  type StoredRecipient,
  sliceAt,
  unpackBodies,
} from './model/message.ts';
export { holdExpiredDetail } from './model/scheduling.ts';
export { type MessageStatus, messageStatuses, type RecipientStatus } from './model/statuses.ts';
export { type MessageStream, streamOf, unsubscribePlaceholder } from './model/stream.ts';
export type { TrackingRecord } from './model/tracking-view.ts';
export {
  contentKeyOf,
  indexChangeFor,
  isInFlight,
  messageIndexAttributes,
  watchEntryOf,
} from './store/message-index.ts';
export {
  appendHistory,
  encodeState,
  type MessageState,
  plainStateAttributes,
  readState,
  sameState,
  stateAttribute,
  stateGuard,
} from './store/message-state.ts';
export { messageLabelsOf, messageSnapshotOf } from './store/message-stream.ts';
export { getMessages, recordDownloads } from './store/messages.ts';
export { enqueueSend } from './store/send-queue.ts';
export { domainMovedDetail, endUnsent, listUnsentFrom } from './unsent.ts';
