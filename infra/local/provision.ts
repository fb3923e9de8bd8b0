import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type Projection,
  ResourceInUseException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import {
  inboundQueueDefinition,
  queueDefinition,
  tableDefinition,
  webhookQueueDefinition,
} from '../resources/definitions.ts';

export interface ProvisionTarget {
  dynamoEndpoint: string;
  sqsS3Endpoint: string;
  region: string;
  names: {
    table: string;
    queue: string;
    deadLetterQueue: string;
    bucket: string;
    /** Default: `<table>-webhooks` and `<table>-webhooks-dlq`. */
    webhookQueue?: string;
    webhookDeadLetterQueue?: string;
    /** Default: `<table>-inbound` and `<table>-inbound-dlq`. */
    inboundQueue?: string;
    inboundDeadLetterQueue?: string;
  };
}

export interface ProvisionedResources {
  tableName: string;
  queueUrl: string;
  deadLetterQueueUrl: string;
  bucketName: string;
  /** The table's stream, read by the host's stream poller. */
  tableStreamArn: string;
  webhookQueueUrl: string;
  webhookDeadLetterQueueUrl: string;
  inboundQueueUrl: string;
  inboundDeadLetterQueueUrl: string;
}

const localCredentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/** Creates the table, queues and bucket on the emulators from the same definitions the stack uses. */
export async function provision(target: ProvisionTarget): Promise<ProvisionedResources> {
  const dynamo = new DynamoDBClient({
    endpoint: target.dynamoEndpoint,
    region: target.region,
    credentials: localCredentials,
  });
  const sqs = new SQSClient({
    endpoint: target.sqsS3Endpoint,
    region: target.region,
    credentials: localCredentials,
  });
  const s3 = new S3Client({
    endpoint: target.sqsS3Endpoint,
    region: target.region,
    credentials: localCredentials,
    forcePathStyle: true,
  });
  // Which call failed, for the start-up message: an emulator's unparseable answer is only "UnknownError".
  let step = `the table on ${target.dynamoEndpoint}`;
  try {
    await createTable(dynamo, target.names.table);
    const tableStreamArn = await ensureStream(dynamo, target.names.table);
    step = `the queues and bucket on ${target.sqsS3Endpoint}`;
    const webhooks = await createQueuePair(
      sqs,
      target.names.webhookQueue ?? `${target.names.table}-webhooks`,
      target.names.webhookDeadLetterQueue ?? `${target.names.table}-webhooks-dlq`,
      webhookQueueDefinition,
    );
    const inbound = await createQueuePair(
      sqs,
      target.names.inboundQueue ?? `${target.names.table}-inbound`,
      target.names.inboundDeadLetterQueue ?? `${target.names.table}-inbound-dlq`,
      inboundQueueDefinition,
    );
    const deadLetter = await sqs.send(
      new CreateQueueCommand({
        QueueName: target.names.deadLetterQueue,
        Attributes: { MessageRetentionPeriod: String(queueDefinition.deadLetterRetentionSeconds) },
      }),
    );
    const deadLetterArn = (
      await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: deadLetter.QueueUrl, AttributeNames: ['QueueArn'] }),
      )
    ).Attributes?.QueueArn;
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: target.names.queue,
        Attributes: {
          VisibilityTimeout: String(queueDefinition.visibilityTimeoutSeconds),
          MessageRetentionPeriod: String(queueDefinition.retentionSeconds),
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: deadLetterArn,
            maxReceiveCount: queueDefinition.maxReceiveCount,
          }),
        },
      }),
    );
    await s3
      .send(new CreateBucketCommand({ Bucket: target.names.bucket }))
      .catch((error: { name?: string }) => {
        if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
      });
    return {
      tableName: target.names.table,
      queueUrl: queue.QueueUrl as string,
      deadLetterQueueUrl: deadLetter.QueueUrl as string,
      bucketName: target.names.bucket,
      tableStreamArn,
      webhookQueueUrl: webhooks.queueUrl,
      webhookDeadLetterQueueUrl: webhooks.deadLetterQueueUrl,
      inboundQueueUrl: inbound.queueUrl,
      inboundDeadLetterQueueUrl: inbound.deadLetterQueueUrl,
    };
  } catch (error) {
    const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    throw new Error(
      `creating ${step} failed: ${(error as Error).name}: ${(error as Error).message}${status === undefined ? '' : ` (HTTP ${status})`}`,
      { cause: error },
    );
  } finally {
    dynamo.destroy();
    sqs.destroy();
    s3.destroy();
  }
}

/** An index's projection as DynamoDB takes it, from the shared definition. */
function projectionOf(index: (typeof tableDefinition.indexes)[number]): Projection {
  return index.projection === 'INCLUDE'
    ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.nonKeyAttributes] }
    : { ProjectionType: index.projection };
}

/** A queue with its dead-letter queue and redrive, shaped by a definition. */
async function createQueuePair(
  sqs: SQSClient,
  name: string,
  deadLetterName: string,
  definition: {
    visibilityTimeoutSeconds: number;
    retentionSeconds: number;
    deadLetterRetentionSeconds: number;
    maxReceiveCount: number;
  },
): Promise<{ queueUrl: string; deadLetterQueueUrl: string }> {
  const deadLetter = await sqs.send(
    new CreateQueueCommand({
      QueueName: deadLetterName,
      Attributes: { MessageRetentionPeriod: String(definition.deadLetterRetentionSeconds) },
    }),
  );
  const deadLetterArn = (
    await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: deadLetter.QueueUrl, AttributeNames: ['QueueArn'] }),
    )
  ).Attributes?.QueueArn;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(definition.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(definition.retentionSeconds),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: deadLetterArn,
          maxReceiveCount: definition.maxReceiveCount,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl as string, deadLetterQueueUrl: deadLetter.QueueUrl as string };
}

/**
 * The table's stream (NEW_AND_OLD_IMAGES), turned on for a table from an older data directory
 * that was created without it. Returns the stream's ARN.
 */
async function ensureStream(dynamo: DynamoDBClient, tableName: string): Promise<string> {
  const described = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
  const spec = described.Table?.StreamSpecification;
  if (
    spec?.StreamEnabled === true &&
    spec.StreamViewType === tableDefinition.streamViewType &&
    described.Table?.LatestStreamArn
  ) {
    return described.Table.LatestStreamArn;
  }
  if (spec?.StreamEnabled === true) {
    await dynamo.send(
      new UpdateTableCommand({ TableName: tableName, StreamSpecification: { StreamEnabled: false } }),
    );
  }
  const updated = await dynamo.send(
    new UpdateTableCommand({
      TableName: tableName,
      StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
    }),
  );
  const arn = updated.TableDescription?.LatestStreamArn;
  if (arn === undefined) throw new Error('DynamoDB Local did not report the table stream');
  return arn;
}

async function createTable(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  const { partitionKey, sortKey, indexes, ttlAttribute } = tableDefinition;
  const attributes = new Set<string>([partitionKey, sortKey]);
  for (const index of indexes) {
    attributes.add(index.partitionKey);
    attributes.add(index.sortKey);
  }
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map((name) => ({ AttributeName: name, AttributeType: 'S' })),
        KeySchema: [
          { AttributeName: partitionKey, KeyType: 'HASH' },
          { AttributeName: sortKey, KeyType: 'RANGE' },
        ],
        StreamSpecification: { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType },
        GlobalSecondaryIndexes: indexes.map((index) => ({
          IndexName: index.name,
          KeySchema: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
          Projection: projectionOf(index),
        })),
      }),
    );
    await dynamo.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: ttlAttribute, Enabled: true },
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    await addMissingIndexes(dynamo, tableName);
  }
}

/**
 * A table kept in DATA_DIR from an older version lacks the indexes added since (such as
 * `suppressions`): create them, one per UpdateTable call as DynamoDB requires.
 */
async function addMissingIndexes(dynamo: DynamoDBClient, tableName: string): Promise<void> {
  const described = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
  const present = new Set((described.Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  for (const index of tableDefinition.indexes) {
    if (present.has(index.name)) continue;
    await dynamo.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [
          { AttributeName: index.partitionKey, AttributeType: 'S' },
          { AttributeName: index.sortKey, AttributeType: 'S' },
        ],
        GlobalSecondaryIndexUpdates: [
          {
            Create: {
              IndexName: index.name,
              KeySchema: [
                { AttributeName: index.partitionKey, KeyType: 'HASH' },
                { AttributeName: index.sortKey, KeyType: 'RANGE' },
              ],
              Projection: projectionOf(index),
            },
          },
        ],
      }),
    );
  }
}
