import type { EventBridgeEvent } from 'aws-lambda';
import { recordSesEvent } from '#shared/delivery/ses-delivery-events.ts';
import { observedWorker } from '#shared/platform/observability/powertools.ts';

/**
 * SES delivery events from EventBridge (`source: aws.ses`; "Email Delivered", "Email Bounced",
 * "Email Complaint Received", "Email Rejected", "Email Delivery Delayed", …). A thrown error makes
 * EventBridge's asynchronous invocation retry it (e.g. an event that overtook the sender's write).
 */
export const handler = observedWorker(
  async (
    event: EventBridgeEvent<string, unknown>,
  ): Promise<{ result: 'recorded' | 'ignored' | 'unknown-message' }> => ({
    result: await recordSesEvent(event),
  }),
);
