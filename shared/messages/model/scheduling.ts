/** Scheduling rules of the messages API (docs/messages.md, "Scheduling modes"). */
export const schedulingHorizonDays = 30;
export const maxScheduleAheadMs = schedulingHorizonDays * 24 * 3600 * 1000;

/**
 * How long `manual-wait` holds a message: the scheduling horizon. A message still `waiting` then is
 * failed by the dispatcher with a detail saying so (docs/messages.md), so its stored body never
 * expires under a message that could still be sent, and the caller sees why it was not.
 */
export const maxHoldMs = maxScheduleAheadMs;
export const holdExpiredDetail = `held by manual-wait for ${schedulingHorizonDays} days without manual-send or manual-cancel; not sent`;

/**
 * Days past the horizon that S3 keeps message objects at least: room for the send attempts and the
 * dead-letter handling after a message scheduled (or held) the longest allowed.
 */
export const retentionMarginDays = 2;
export const minRetentionDays = schedulingHorizonDays + retentionMarginDays;

/** Why a `send_at` is unacceptable, or undefined when it is fine. */
export function sendAtProblem(sendAt: Date, now: Date): string | undefined {
  if (sendAt.getTime() <= now.getTime()) return 'send_at must be in the future';
  if (sendAt.getTime() - now.getTime() > maxScheduleAheadMs)
    return `send_at must be at most ${schedulingHorizonDays} days ahead`;
  return undefined;
}
