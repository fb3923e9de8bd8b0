import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  bucketDefinition,
  inboundQueueDefinition,
  queueDefinition,
  tableDefinition,
  webhookQueueDefinition,
} from '../resources/definitions.ts';

export interface StorageProps {
  /** Days message bodies and attachments stay in S3. */
  readonly retentionDays: number;
  /** Lifetime of a cached avatar; the bucket removes avatar objects a day after it. */
  readonly avatarTtlSeconds: number;
}

/**
 * The table, the send queue with its dead-letter queue, the object bucket (with its access-log
 * bucket) and the DKIM KMS key. Shapes come from infra/resources/definitions.ts, which the local
 * host provisions from too. Stateful resources are retained when the stack is deleted.
 */
export class Storage extends Construct {
  readonly table: dynamodb.Table;
  readonly indexNames: string[];
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly eventsDeadLetterQueue: sqs.Queue;
  readonly bucket: s3.Bucket;
  readonly accessLogBucket: s3.Bucket;
  readonly dkimKey: kms.Key;
  /** One job per webhook event, endpoint and attempt (docs/webhooks.md). */
  readonly webhookQueue: sqs.Queue;
  /** Jobs after their last attempt, and jobs whose processing crashed maxReceiveCount times. */
  readonly webhookDeadLetterQueue: sqs.Queue;
  /** The stream mapping's on-failure destination: records the fan-out could not process. */
  readonly streamFailureQueue: sqs.Queue;
  /** SES receipts of stored inbound mail (docs/inbound.md), and those the function gave up on. */
  readonly inboundQueue: sqs.Queue;
  readonly inboundDeadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: StorageProps) {
    super(scope, id);
    const attribute = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attribute(tableDefinition.partitionKey),
      sortKey: attribute(tableDefinition.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: tableDefinition.ttlAttribute,
      // The outbox of webhook events: every committed change, with the item before and after.
      stream: dynamodb.StreamViewType[tableDefinition.streamViewType],
      removalPolicy: RemovalPolicy.RETAIN,
      // A stack update or a console click cannot delete the messages; turn off deliberately first.
      deletionProtection: true,
    });
    this.indexNames = [];
    for (const index of tableDefinition.indexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attribute(index.partitionKey),
        sortKey: attribute(index.sortKey),
        ...(index.projection === 'INCLUDE'
          ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.nonKeyAttributes] }
          : {
              projectionType:
                index.projection === 'ALL' ? dynamodb.ProjectionType.ALL : dynamodb.ProjectionType.KEYS_ONLY,
            }),
      });
      this.indexNames.push(index.name);
    }

    if (queueDefinition.visibilityTimeoutSeconds < 6 * queueDefinition.senderTimeoutSeconds) {
      throw new Error(
        'queueDefinition.visibilityTimeoutSeconds must be at least 6 × senderTimeoutSeconds (Lambda event source rule)',
      );
    }
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(queueDefinition.deadLetterRetentionSeconds),
      // The dead-letter function consumes it with the sender's timeout; same 6 × rule.
      visibilityTimeout: Duration.seconds(queueDefinition.visibilityTimeoutSeconds),
    });
    // SES events the delivery-events function could not record: the EventBridge rule's target DLQ
    // and the function's on-failure destination. Nothing consumes it; an alarm watches its depth.
    this.eventsDeadLetterQueue = new sqs.Queue(this, 'EventsDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    this.queue = new sqs.Queue(this, 'SendQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(queueDefinition.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(queueDefinition.retentionSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: queueDefinition.maxReceiveCount },
    });

    this.webhookDeadLetterQueue = new sqs.Queue(this, 'WebhookDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(webhookQueueDefinition.deadLetterRetentionSeconds),
    });
    this.webhookQueue = new sqs.Queue(this, 'WebhookQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(webhookQueueDefinition.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(webhookQueueDefinition.retentionSeconds),
      deadLetterQueue: {
        queue: this.webhookDeadLetterQueue,
        maxReceiveCount: webhookQueueDefinition.maxReceiveCount,
      },
    });
    this.streamFailureQueue = new sqs.Queue(this, 'StreamFailureQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });

    this.inboundDeadLetterQueue = new sqs.Queue(this, 'InboundDeadLetterQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.seconds(inboundQueueDefinition.deadLetterRetentionSeconds),
    });
    this.inboundQueue = new sqs.Queue(this, 'InboundQueue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(inboundQueueDefinition.visibilityTimeoutSeconds),
      retentionPeriod: Duration.seconds(inboundQueueDefinition.retentionSeconds),
      deadLetterQueue: {
        queue: this.inboundDeadLetterQueue,
        maxReceiveCount: inboundQueueDefinition.maxReceiveCount,
      },
    });

    this.accessLogBucket = new s3.Bucket(this, 'AccessLogBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const avatarDays = Math.ceil(props.avatarTtlSeconds / 86_400) + 1;
    this.bucket = new s3.Bucket(this, 'ObjectBucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: this.accessLogBucket,
      serverAccessLogsPrefix: 'object-bucket/',
      lifecycleRules: [
        {
          id: 'expire-message-objects',
          prefix: bucketDefinition.messagePrefix,
          expiration: Duration.days(props.retentionDays),
        },
        {
          // Received mail (raw and parsed) is kept as long as sent mail's bodies.
          id: 'expire-inbound-objects',
          prefix: bucketDefinition.inboundPrefix,
          expiration: Duration.days(props.retentionDays),
        },
        {
          id: 'expire-avatar-cache',
          prefix: bucketDefinition.avatarPrefix,
          expiration: Duration.days(avatarDays),
        },
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.dkimKey = new kms.Key(this, 'DkimKey', {
      description: 'Envelope encryption of DKIM private keys (svc-mail)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
