import { randomUUID } from 'node:crypto';
import { envString } from '../../shared/platform/config/env.ts';
import { bounceEvent, deliveryStatusOf } from './feedback-report.ts';
import { loadFunction } from './function-code.ts';
import { timedInvocation } from './invocations.ts';

/**
 * The local host's stand-in for SES's feedback endpoint (the MX of every MAIL FROM domain on AWS,
 * `feedback-smtp.<region>.amazonses.com`): mail to a message's return path, `<message uuid>@<MAIL
 * FROM domain>`, is a bounce that came later, after the receiving server first accepted. Which hosts
 * are return paths comes from the table (each domain's MAIL FROM domain), never from a list in the
 * configuration. The report becomes the "Email Bounced" event SES would send, handed to the
 * delivery-events function as EventBridge hands it on AWS.
 */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The message uuid when `address` is a return path of a registered domain's MAIL FROM domain. */
export async function returnPathMessage(address: string): Promise<string | undefined> {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  if (at < 0 || !uuidPattern.test(local)) return undefined;
  const { returnPathOwner } = await import('../../shared/domains/registry.ts');
  return (await returnPathOwner(address.slice(at + 1))) === undefined ? undefined : local.toLowerCase();
}

type EventHandler = (event: unknown, context: unknown) => Promise<unknown>;

/**
 * Records a report about message `messageUuid`: true when it was a DSN naming a failed recipient.
 * Throws when the function fails (the message may still be sending): the caller answers 451 and the
 * reporting server tries again, as EventBridge retries on AWS.
 */
export async function deliverFeedback(raw: Buffer, messageUuid: string, now = new Date()): Promise<boolean> {
  const report = await deliveryStatusOf(raw);
  const feedbackId = randomUUID();
  const configurationSet = envString('SES_CONFIGURATION_SET') ?? 'svc-mail';
  const event = report && bounceEvent(report, messageUuid, feedbackId, configurationSet, now);
  if (event === undefined) return false;
  const { lambdaContext } = await import('./lambda-context.ts');
  const handler = await loadFunction<EventHandler>('delivery-events');
  await timedInvocation('delivery-events', () =>
    handler(event, lambdaContext('delivery-events', feedbackId, 30_000)),
  );
  return true;
}
