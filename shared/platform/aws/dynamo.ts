import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { observeClient } from './client-observer.ts';
import { sdkTimeouts } from './client-options.ts';

/**
 * One DocumentClient per function instance, created on first use. The endpoint comes from the
 * SDK's own `AWS_ENDPOINT_URL_DYNAMODB` setting, so the local emulator needs no code path of its own.
 * One module per service, so a function bundles only the SDK clients it imports.
 */
let documentClient: DynamoDBDocumentClient | undefined;

export function dynamo(): DynamoDBDocumentClient {
  documentClient ??= DynamoDBDocumentClient.from(
    observeClient(new DynamoDBClient({ maxAttempts: 3, requestHandler: sdkTimeouts })),
    { marshallOptions: { removeUndefinedValues: true } },
  );
  return documentClient;
}
