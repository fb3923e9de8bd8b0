/**
 * A send-queue entry's body, `{"message_uuid"}` (written by shared/messages/store/send-queue.ts),
 * as the sender and the dead-letter function read it: the message it names, or undefined for a body
 * that is not one (it can never succeed).
 */
export function queuedMessageUuidOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { message_uuid?: unknown };
    return typeof parsed.message_uuid === 'string' && parsed.message_uuid.length > 0
      ? parsed.message_uuid
      : undefined;
  } catch {
    return undefined;
  }
}
