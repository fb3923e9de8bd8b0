/** Scheduling rules of DESIGN.md section 3. */
export const maxScheduleAheadMs = 30 * 24 * 3600 * 1000;

/** Why a `send_at` is unacceptable, or undefined when it is fine. */
export function sendAtProblem(sendAt: Date, now: Date): string | undefined {
  if (sendAt.getTime() <= now.getTime()) return 'send_at must be in the future';
  if (sendAt.getTime() - now.getTime() > maxScheduleAheadMs) return 'send_at must be at most 30 days ahead';
  return undefined;
}
