import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * One client per service and function instance, created on first use. Endpoints come from the SDK's
 * own `AWS_ENDPOINT_URL_DYNAMODB` setting, so the local emulator needs no code path of its own.
 * Short socket timeouts and three attempts keep an unreachable database from stalling a request.
 */
let documentClient: DynamoDBDocumentClient | undefined;

// Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes and keeps
// waiting: a store that accepts connections but never answers would hang the request.
export const sdkTimeouts = {
  connectionTimeout: 1_000,
  requestTimeout: 5_000,
  throwOnRequestTimeout: true,
} as const;

export function dynamo(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(
    new DynamoDBClient({ maxAttempts: 3, requestHandler: sdkTimeouts }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  return documentClient;
}

let sqsClient: SQSClient | undefined;
let s3Client: S3Client | undefined;

/**
 * Against an SQS emulator (`AWS_ENDPOINT_URL_SQS`) the queue URL's host (`sqs.<region>.127.0.0.1`)
 * does not resolve, so the SDK must not use the queue URL as the endpoint there.
 */
export function sqs(): SQSClient {
  sqsClient ??= new SQSClient({
    maxAttempts: 3,
    requestHandler: sdkTimeouts,
    useQueueUrlAsEndpoint: process.env.AWS_ENDPOINT_URL_SQS === undefined,
  });
  return sqsClient;
}

/** Path-style addressing only against an S3 emulator (`AWS_ENDPOINT_URL_S3`); virtual-hosted on AWS. */
export function s3(): S3Client {
  s3Client ??= new S3Client({
    maxAttempts: 3,
    requestHandler: sdkTimeouts,
    forcePathStyle: process.env.AWS_ENDPOINT_URL_S3 !== undefined,
  });
  return s3Client;
}
