import { describeError, log } from '../platform/observability/log.ts';
import { openIndexedLinkToken, openLinkToken } from '../platform/tokens/link-tokens.ts';
import { unsubscribePrefix } from './compose.ts';
import { trackingRetentionDays } from './config.ts';
import { truncatedAddress } from './model/client-address.ts';
import { trackableLinks } from './model/html-links.ts';
import { LinkCache } from './model/link-cache.ts';
import { machineOpenReason } from './model/machine-open.ts';
import { type ClickPayload, decodeClick, decodeOpen } from './model/token-payload.ts';
import { type Hit, recordHit } from './store/hits.ts';
import { getTrackedMessage, storedHtmlOf, type TrackedMessage } from './store/tracked-message.ts';

/**
 * The tracking routes' work (docs/tracking.md): a token that does not open, or names a message or
 * recipient that is not there, records nothing; a good one records the hit with one write. Both
 * routes answer first and record after the answer (routes.ts, `afterResponse`): the open answers
 * its image whatever the token, the click answers from the stored message's links, never from the
 * token or the request.
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

/** A click to answer: its target, and what recording it needs. */
export interface Click {
  url: string;
  payload: ClickPayload;
  /** The message, when finding the target read it. */
  message?: TrackedMessage;
}

const linkCache = new LinkCache(256, 10 * 60_000);

/**
 * The target of a click token; undefined for a token that does not open or names no link of a
 * stored message. The message's links are read once per instance (`LinkCache`); a link's index
 * comes from the sealed token, so only links the message holds are ever answered.
 */
export async function clickTarget(token: string, now: Date): Promise<Click | undefined> {
  const payload = await openClickToken(token);
  if (payload === undefined) return undefined;
  const cached = linkCache.get(payload.messageUuid, now.getTime());
  if (cached !== undefined) {
    const url = cached[payload.link];
    return url === undefined ? undefined : { url, payload };
  }
  const message = await getTrackedMessage(payload.messageUuid);
  if (message === undefined || message.recipients[payload.recipient] === undefined) return undefined;
  const html = await storedHtmlOf(message);
  const links = html === undefined ? [] : trackableLinks(html, unsubscribePrefix());
  linkCache.set(payload.messageUuid, links, now.getTime());
  const url = links[payload.link];
  return url === undefined ? undefined : { url, payload, message };
}

/**
 * A click token's payload: one of a copy's indexed tokens (`sealIndexedLinkTokens`), or a token
 * sealed per link, as mail composed before indexed tokens holds.
 */
async function openClickToken(token: string): Promise<ClickPayload | undefined> {
  const indexed = await openIndexedLinkToken('click', token);
  if (indexed !== undefined) {
    const copy = decodeOpen(indexed.payload);
    return copy === undefined ? undefined : { ...copy, link: indexed.index };
  }
  const sealed = await openLinkToken('click', token);
  return sealed === undefined ? undefined : decodeClick(sealed);
}

/** Records a click that was answered; nothing when its message or recipient is gone. */
export async function recordClick(visit: Visit, click: Click): Promise<boolean> {
  const message = click.message ?? (await getTrackedMessage(click.payload.messageUuid));
  const recipient = message?.recipients[click.payload.recipient];
  if (message === undefined || recipient === undefined) return false;
  await record(message, {
    ...hitOf(visit, 'click', click.payload.recipient, recipient, false),
    link: { url: click.url, index: click.payload.link },
  });
  return true;
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
