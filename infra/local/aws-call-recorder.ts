import { appendFileSync } from 'node:fs';
import type { MiddlewareStack } from '@smithy/types';
import { type ClientObserver, clientObserverKey } from '../../shared/platform/aws/client-observer.ts';
import { tableDefinition } from '../resources/definitions.ts';
import { currentFunction } from './invocations.ts';

/**
 * Test runs only: every AWS call a function makes, as the IAM requests the deployed role would have
 * to allow, one JSON line per request in a file (`AWS_CALL_LOG`). The host installs it from
 * outside (shared/platform/aws/client-observer.ts); no function imports this module, so no bundle
 * holds it. test/support/iam-check.ts compares the lines with each function's policy.
 */
export interface RecordedRequest {
  function: string;
  /** The IAM action, e.g. `dynamodb:PutItem`. */
  action: string;
  /** The resource as an ARN with the local names (account `000000000000`). */
  resource: string;
  /** For DynamoDB item writes and reads: the partition key values (`dynamodb:LeadingKeys`). */
  leadingKeys?: string[];
}

export const localAccount = '000000000000';

// biome-ignore lint/suspicious/noExplicitAny: the inputs of many SDK commands, read field by field
type Input = Record<string, any>;

const region = () => process.env.AWS_REGION ?? 'us-east-1';
const tableArn = (table: string) => `arn:aws:dynamodb:${region()}:${localAccount}:table/${table}`;
const queueArn = (url: string) => `arn:aws:sqs:${region()}:${localAccount}:${url.split('/').pop()}`;
const partitionValue = (key: Input | undefined): string[] => {
  const value = key?.[tableDefinition.partitionKey]?.S;
  return typeof value === 'string' ? [value] : [];
};

/** What one SDK command asks IAM for: DynamoDB's batch and transaction calls name several items. */
export function iamRequestsOf(
  clientName: string,
  commandName: string,
  input: Input,
): Omit<RecordedRequest, 'function'>[] {
  const operation = commandName.replace(/Command$/, '');
  switch (clientName) {
    case 'DynamoDBClient': {
      if (operation === 'TransactWriteItems') {
        return (input.TransactItems as Input[]).flatMap((item) =>
          Object.entries(item).map(([kind, request]: [string, Input]) => ({
            action: `dynamodb:${{ Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' }[kind] ?? kind}`,
            resource: tableArn(request.TableName),
            leadingKeys: partitionValue(request.Key ?? request.Item),
          })),
        );
      }
      if (operation === 'BatchWriteItem' || operation === 'BatchGetItem') {
        return Object.entries(input.RequestItems as Input).map(([table, requests]) => ({
          action: `dynamodb:${operation}`,
          resource: tableArn(table),
          leadingKeys: (Array.isArray(requests) ? requests : requests.Keys).flatMap((request: Input) =>
            partitionValue(request.PutRequest?.Item ?? request.DeleteRequest?.Key ?? request),
          ),
        }));
      }
      const index = input.IndexName === undefined ? '' : `/index/${input.IndexName}`;
      const keys = partitionValue(input.Key ?? input.Item);
      return [
        {
          action: `dynamodb:${operation}`,
          resource: `${tableArn(input.TableName)}${index}`,
          ...(keys.length > 0 ? { leadingKeys: keys } : {}),
        },
      ];
    }
    case 'S3Client': {
      const bucket = `arn:aws:s3:::${input.Bucket}`;
      if (operation === 'ListObjectsV2' || operation === 'ListObjects')
        return [{ action: 's3:ListBucket', resource: bucket }];
      if (operation === 'DeleteObjects')
        return (input.Delete.Objects as Input[]).map((object) => ({
          action: 's3:DeleteObject',
          resource: `${bucket}/${object.Key}`,
        }));
      const action = operation === 'HeadObject' ? 'GetObject' : operation;
      return [{ action: `s3:${action}`, resource: `${bucket}/${input.Key}` }];
    }
    case 'SQSClient':
      return [
        {
          action: `sqs:${operation === 'SendMessageBatch' ? 'SendMessage' : operation}`,
          resource: queueArn(input.QueueUrl),
        },
      ];
    case 'SESv2Client': {
      // The identity routes name it (EmailIdentity); SendEmail, by its From address's domain.
      const identity =
        typeof input.EmailIdentity === 'string'
          ? input.EmailIdentity
          : String(input.FromEmailAddress).replace(/^.*@/, '').replace(/>$/, '');
      return [
        {
          action: `ses:${operation}`,
          resource: `arn:aws:ses:${region()}:${localAccount}:identity/${identity}`,
        },
      ];
    }
    case 'SecretsManagerClient':
      return [{ action: `secretsmanager:${operation}`, resource: String(input.SecretId) }];
    case 'KMSClient':
      return [{ action: `kms:${operation}`, resource: String(input.KeyId) }];
    default:
      return [{ action: `${clientName}:${operation}`, resource: '*' }];
  }
}

/**
 * Installs the recorder in this process: every client a factory creates from now on appends the
 * requests of each call made inside a function's invocation to `file`. Calls of the host itself
 * (provisioning, the event sources' polling, which Lambda's service role makes on AWS) carry no
 * function and are not recorded.
 */
export function recordAwsCalls(file: string): void {
  const observer: ClientObserver = (client) => {
    (client.middlewareStack as MiddlewareStack<Input, object>).add(
      (next, context) => async (args) => {
        const functionId = currentFunction();
        if (functionId !== undefined) {
          const lines = iamRequestsOf(
            context.clientName as string,
            context.commandName as string,
            args.input as Input,
          ).map((request) => JSON.stringify({ function: functionId, ...request }));
          appendFileSync(file, lines.map((line) => `${line}\n`).join(''));
        }
        return next(args);
      },
      { step: 'build', name: 'recordIamRequests' },
    );
  };
  (globalThis as { [clientObserverKey]?: ClientObserver })[clientObserverKey] = observer;
}
