import { SQSClient } from '@aws-sdk/client-sqs';
import { observeClient } from './client-observer.ts';
import { sdkTimeouts } from './client-options.ts';

let sqsClient: SQSClient | undefined;

/**
 * Against an SQS emulator (`AWS_ENDPOINT_URL_SQS`) the queue URL's host (`sqs.<region>.127.0.0.1`)
 * does not resolve, so the SDK must not use the queue URL as the endpoint there.
 */
export function sqs(): SQSClient {
  sqsClient ??= observeClient(
    new SQSClient({
      maxAttempts: 3,
      requestHandler: sdkTimeouts,
      useQueueUrlAsEndpoint: process.env.AWS_ENDPOINT_URL_SQS === undefined,
    }),
  );
  return sqsClient;
}
