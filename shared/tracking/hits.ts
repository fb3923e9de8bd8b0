import { describeError, log } from '../platform/observability/log.ts';
import { openLinkToken } from '../platform/tokens/link-tokens.ts';
import { unsubscribePrefix } from './compose.ts';
import { trackingRetentionDays } from './config.ts';
import { truncatedAddress } from './model/client-address.ts';
import { trackableLinks } from './model/html-links.ts';
import { machineOpenReason } from './model/machine-open.ts';
import { decodeClick, decodeOpen } from './model/token-payload.ts';
import { type Hit, recordHit } from './store/hits.ts';
import { getTrackedMessage, storedHtmlOf, type TrackedMessage } from './store/tracked-message.ts';

/**
 * The tracking routes' work (docs/tracking.md): a token that does not open, or names a message or
 * recipient that is not there, records nothing; a good one records the hit with one write. The
 * answer never waits on the record's failure: a click is sent on to its target even when the write
 * fails (after two quick retries, logged).
 */
export interface Visit {
  token: string;
  /** The full client address: truncated before anything is stored. */
  address: string;
  userAgent: string;
  at: Date;
}

export async function recordOpen(visit: Visit): Promise<boolean> {
  const opened = await openLinkToken('open', visit.token);
  const payload = opened === undefined ? undefined : decodeOpen(opened);
  if (payload === undefined) return false;
  const message = await getTrackedMessage(payload.messageUuid);
  const recipient = message?.recipients[payload.recipient];
  if (message === undefined || recipient === undefined) return false;
  const machine = machineOpenReason({ ...visit, sentAt: message.sentAt });
  await record(message, hitOf(visit, 'open', payload.recipient, recipient, machine !== undefined));
  return true;
}

/** The target of a click token; undefined for a token that names no link of a stored message. */
export async function followClick(visit: Visit): Promise<string | undefined> {
  const opened = await openLinkToken('click', visit.token);
  const payload = opened === undefined ? undefined : decodeClick(opened);
  if (payload === undefined) return undefined;
  const message = await getTrackedMessage(payload.messageUuid);
  const recipient = message?.recipients[payload.recipient];
  if (message === undefined || recipient === undefined) return undefined;
  const html = await storedHtmlOf(message);
  const url = html === undefined ? undefined : trackableLinks(html, unsubscribePrefix())[payload.link];
  if (url === undefined) return undefined;
  await record(message, {
    ...hitOf(visit, 'click', payload.recipient, recipient, false),
    link: { url, index: payload.link },
  });
  return url;
}

function hitOf(visit: Visit, kind: Hit['kind'], index: number, recipient: string, machineOpen: boolean): Hit {
  return {
    kind,
    at: visit.at.toISOString(),
    recipientIndex: index,
    recipient,
    userAgent: visit.userAgent.slice(0, 512),
    clientAddress: truncatedAddress(visit.address) ?? null,
    machineOpen,
  };
}

async function record(message: TrackedMessage, hit: Hit): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await recordHit(message, hit, trackingRetentionDays());
      return;
    } catch (error) {
      if (attempt >= 3) {
        log('error', 'a tracking hit could not be recorded', {
          message_uuid: message.messageUuid,
          kind: hit.kind,
          ...describeError(error),
        });
        return;
      }
    }
  }
}
