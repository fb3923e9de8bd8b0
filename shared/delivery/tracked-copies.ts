import type { TrackingSettings } from '../tracking/index.ts';
import type { Composition } from './compose-message.ts';
import type { TransportResult } from './mail/transport.ts';
import type { Recipient } from './model/status.ts';
import type { ComposedRecord, SentCopy } from './store/message-delivery.ts';

/**
 * The copies of a tracked message (docs/tracking.md): one per recipient, each composed with its
 * links and pixel naming that recipient and handed to the relay on its own. Copies an earlier
 * attempt got accepted (`already`) are not sent again. The first failure stops the round: what was
 * accepted before it is returned with the failure, so the caller records it before retrying.
 */
export interface TrackedRound {
  results: TransportResult[];
  /** The copies the relay accepted in this round (refused ones are in `results` only). */
  accepted: SentCopy[];
  /** The composition record of this round's copies (the last one composed), if any was. */
  composed?: ComposedRecord;
  /** Why the round stopped before its last copy. */
  interrupted?: unknown;
}

export async function sendTrackedCopies(input: {
  sendTo: readonly string[];
  recipients: readonly Recipient[];
  already: readonly SentCopy[];
  settings: TrackingSettings;
  build: (tracking: Composition['tracking']) => Promise<{ raw: Buffer; composed: ComposedRecord }>;
  mailTo: (to: string[], raw: Buffer) => Promise<TransportResult>;
  /** Writes an accepted copy before the next goes out; a failure stops the round like the relay's. */
  recordCopy?: (copy: SentCopy, result: TransportResult, composed: ComposedRecord) => Promise<void>;
}): Promise<TrackedRound> {
  const round: TrackedRound = { results: [], accepted: [] };
  const sent = new Set(input.already.map((copy) => copy.recipient));
  const owed = input.sendTo
    .map((email) => ({ email, recipientIndex: recipientIndexOf(input.recipients, email) }))
    .filter((copy) => !sent.has(copy.recipientIndex));
  for (const [position, { email, recipientIndex }] of owed.entries()) {
    try {
      const built = await input.build({ settings: input.settings, recipientIndex });
      round.composed = built.composed;
      const result = await input.mailTo([email], built.raw);
      round.results.push(result);
      if (result.recipients.some((entry) => entry.outcome === 'accepted')) {
        const copy: SentCopy = {
          recipient: recipientIndex,
          at: built.composed.at,
          ...(built.composed.selectors === undefined ? {} : { selectors: built.composed.selectors }),
        };
        round.accepted.push(copy);
        // The last copy needs no write of its own: the round's outcome is written next.
        if (position < owed.length - 1) await input.recordCopy?.(copy, result, built.composed);
      }
    } catch (error) {
      round.interrupted = error;
      break;
    }
  }
  return round;
}

/** A recipient's position in the message's recipient list (what tracking tokens name). */
export function recipientIndexOf(recipients: readonly Pick<Recipient, 'email'>[], email: string): number {
  const index = recipients.findIndex((recipient) => recipient.email.toLowerCase() === email.toLowerCase());
  return Math.max(index, 0);
}

/** The relay's answers to the copies of a tracked message, as one answer. */
export function mergedResults(results: readonly TransportResult[]): TransportResult {
  return {
    messageId: results[0]?.messageId,
    response: results
      .map((result) => result.response)
      .filter(Boolean)
      .join('; '),
    recipients: results.flatMap((result) => result.recipients),
    finalHop: results.every((result) => result.finalHop),
  };
}
