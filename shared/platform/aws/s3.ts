import { S3Client } from '@aws-sdk/client-s3';
import { observeClient } from './client-observer.ts';
import { sdkTimeouts } from './client-options.ts';

let s3Client: S3Client | undefined;

/** Path-style addressing only against an S3 emulator (`AWS_ENDPOINT_URL_S3`); virtual-hosted on AWS. */
export function s3(): S3Client {
  s3Client ??= observeClient(
    new S3Client({
      maxAttempts: 3,
      requestHandler: sdkTimeouts,
      forcePathStyle: process.env.AWS_ENDPOINT_URL_S3 !== undefined,
    }),
  );
  return s3Client;
}
