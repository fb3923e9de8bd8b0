/**
 * Message statuses and the transitions the messages API itself makes (docs/data-model.md).
 * The delivery pipeline owns the others (queued → processing → sent → delivered/bounced/failed, or
 * processing → suppressed when every recipient is on the account's suppression list).
 */
export const messageStatuses = [
  'queued',
  'scheduled',
  'waiting',
  'cancelled',
  'processing',
  'sent',
  'delivered',
  'bounced',
  'failed',
  'suppressed',
] as const;

export type MessageStatus = (typeof messageStatuses)[number];

/** Never deleted: the compliance rule of the interface (section 3). */
export const protectedStatuses = [
  'sent',
  'delivered',
  'bounced',
  'processing',
] as const satisfies readonly MessageStatus[];

export function isProtected(status: string): boolean {
  return (protectedStatuses as readonly string[]).includes(status);
}

/** `suppressed`: on the account's suppression list at send time, so never attempted (final). */
export const recipientStatuses = ['pending', 'delivered', 'bounced', 'failed', 'suppressed'] as const;
export type RecipientStatus = (typeof recipientStatuses)[number];

export const creationModes = ['immediate', 'scheduled', 'manual-wait'] as const;
export const actionModes = ['manual-send', 'manual-cancel'] as const;
export const schedulingModes = [...creationModes, ...actionModes] as const;
export type CreationMode = (typeof creationModes)[number];
export type ActionMode = (typeof actionModes)[number];
export type SchedulingMode = (typeof schedulingModes)[number];

/** The status a new message starts in, per creation mode. */
export const initialStatus: Record<CreationMode, MessageStatus> = {
  immediate: 'queued',
  scheduled: 'scheduled',
  'manual-wait': 'waiting',
};

/** What manual-send and manual-cancel may act on, and the status they lead to. */
export const actionTransitions: Record<ActionMode, { from: readonly MessageStatus[]; to: MessageStatus }> = {
  'manual-send': { from: ['waiting', 'scheduled'], to: 'queued' },
  'manual-cancel': { from: ['waiting', 'scheduled', 'queued'], to: 'cancelled' },
};
