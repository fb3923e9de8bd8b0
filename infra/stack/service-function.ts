import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type Duration, Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ObjectAccess, ObjectPrefix, TableAccess } from '../../shared/platform/access.ts';
import { keys } from '../../shared/platform/table/keys.ts';
import { webhookSecretPurpose } from '../../shared/webhooks/config.ts';
import { bundlingFor } from '../bundling.ts';

export const projectRoot = join(import.meta.dirname, '..', '..');

/** functions/<id>/handler.ts: the file the local gateway imports and esbuild bundles. */
export function entryOf(functionId: string, root = projectRoot): string {
  return join(root, 'functions', functionId, 'handler.ts');
}

export class MissingEntryError extends Error {
  constructor(missing: string[], root: string) {
    super(
      `Cannot synthesize: ${missing.length} function entr${missing.length === 1 ? 'y is' : 'ies are'} missing:\n` +
        missing.map((id) => `  - ${id}: ${relative(root, entryOf(id, root))}`).join('\n') +
        "\nEvery route (in its wing's routes.ts) and every worker (in its wing's workers.ts) needs functions/<id>/handler.ts exporting `handler`.",
    );
    this.name = 'MissingEntryError';
  }
}

/** Fails with one message naming every missing entry, before any bundling starts. */
export function assertEntriesExist(functionIds: readonly string[], root = projectRoot): void {
  const missing = functionIds.filter((id) => !existsSync(entryOf(id, root)));
  if (missing.length > 0) throw new MissingEntryError(missing, root);
}

export { esmRequireBanner } from '../bundling.ts';

export type QueueVariable =
  | 'QUEUE_URL'
  | 'DEAD_LETTER_QUEUE_URL'
  | 'WEBHOOK_QUEUE_URL'
  | 'WEBHOOK_DEAD_LETTER_QUEUE_URL'
  | 'INBOUND_QUEUE_URL';

const queueStatementNames: Record<QueueVariable, string> = {
  QUEUE_URL: 'SendToSendQueue',
  DEAD_LETTER_QUEUE_URL: 'SendToDeadLetterQueue',
  WEBHOOK_QUEUE_URL: 'SendToWebhookQueue',
  WEBHOOK_DEAD_LETTER_QUEUE_URL: 'SendToWebhookDeadLetterQueue',
  INBOUND_QUEUE_URL: 'SendToInboundQueue',
};

const objectStatementNames: Record<ObjectPrefix, string> = {
  'messages/': 'MessageObjects',
  'avatars/': 'AvatarObjects',
  'housekeeping/': 'HousekeepingObjects',
  'templates/': 'TemplateObjects',
  'inbound/': 'InboundObjects',
};

export interface ServiceFunctionProps {
  /** Route or worker id; also the folder of the entry. */
  readonly functionId: string;
  readonly description: string;
  readonly timeout: Duration;
  readonly memorySize?: number;
  readonly logRetention: logs.RetentionDays;
  readonly environment?: Record<string, string>;
  /** Reserved concurrency: its own share, and its cap (infra/stack/untrusted-input.ts). */
  readonly reservedConcurrency?: number;
}

/**
 * One Lambda function with the project's defaults (Node.js 22 on arm64, minified ESM with source
 * maps, split into chunks loaded on demand, the AWS SDK bundled, local esbuild, its own log group with retention, JSON logs, a role
 * without managed policies, active X-Ray tracing) and grant helpers that set the environment variable and the IAM
 * permission together, so a function can only find what it may use.
 */
export class ServiceFunction extends Construct {
  readonly function: NodejsFunction;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
  readonly functionId: string;
  private listsBucket = false;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.functionId = props.functionId;
    this.logGroup = new logs.LogGroup(this, 'Logs', { retention: props.logRetention });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Runs the ${props.functionId} function`,
    });
    this.role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'WriteOwnLogs',
        actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        resources: [this.logGroup.logGroupArn],
      }),
    );

    this.function = new NodejsFunction(this, 'Function', {
      entry: entryOf(props.functionId),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: join(projectRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      description: props.description,
      timeout: props.timeout,
      memorySize: props.memorySize ?? 512,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      environment: { NODE_OPTIONS: '--enable-source-maps', ...props.environment },
      bundling: bundlingFor(entryOf(props.functionId), projectRoot),
      // X-Ray traces of every invocation (no Powertools Tracer: docs/decisions/0012-observability.md).
      tracing: lambda.Tracing.ACTIVE,
      ...(props.reservedConcurrency === undefined
        ? {}
        : { reservedConcurrentExecutions: props.reservedConcurrency }),
    });
    // The log statement must exist before the function, or its first start cannot log.
    this.function.node.addDependency(this.role);
  }

  addEnvironment(name: string, value: string): this {
    this.function.addEnvironment(name, value);
    return this;
  }

  private allow(
    sid: string,
    actions: string[],
    resources: string[],
    conditions?: Record<string, unknown>,
  ): void {
    this.role.addToPolicy(new iam.PolicyStatement({ sid, actions, resources, conditions }));
  }

  /**
   * TABLE_NAME plus read, write (no deletes), write-batch (write and BatchWriteItem), delete (no
   * puts/updates) or settle-counters (updates and deletes of counter rows only) on the table and its
   * indexes.
   */
  bindTable(table: ITable, access: TableAccess, indexNames: readonly string[]): this {
    this.addEnvironment('TABLE_NAME', table.tableName);
    const resources = [table.tableArn, ...indexNames.map((name) => `${table.tableArn}/index/${name}`)];
    this.allow(
      'ReadMessageTable',
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'],
      resources,
    );
    if (access === 'write' || access === 'write-delete' || access === 'write-batch') {
      this.allow(
        'WriteMessageTableWithoutDeleting',
        ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
        [table.tableArn],
      );
    }
    // A batch of new messages: BatchWriteItem, which IAM cannot limit to puts (docs/security.md).
    if (access === 'write-batch')
      this.allow('WriteNewMessagesInBatches', ['dynamodb:BatchWriteItem'], [table.tableArn]);
    // The stats query settles counter rows (docs/stats.md): updates and deletes of those items only.
    if (access === 'settle-counters') {
      this.allow('SettleCounterRowsOnly', ['dynamodb:UpdateItem', 'dynamodb:DeleteItem'], [table.tableArn], {
        'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.statsOfAccount('*')] },
      });
    }
    if (access === 'delete' || access === 'write-delete') {
      this.allow(
        'DeleteMessageTableItems',
        ['dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'],
        [table.tableArn],
      );
    }
    return this;
  }

  /** QUEUE_URL (or DEAD_LETTER_QUEUE_URL) plus SendMessage. Consuming is granted by the event source. */
  bindQueue(queue: IQueue, variable: QueueVariable, access: 'send' | 'consume'): this {
    this.addEnvironment(variable, queue.queueUrl);
    if (access === 'send') this.allow(queueStatementNames[variable], ['sqs:SendMessage'], [queue.queueArn]);
    return this;
  }

  /**
   * DKIM_KMS_KEY_ARN (the key-wrapping key the envelope uses) plus encrypt or decrypt, only for
   * webhook secrets: the statement requires the encryption context's `purpose`, so these functions
   * cannot open DKIM private keys with it.
   */
  bindWebhookSecretKey(key: IKey, mode: 'encrypt' | 'decrypt'): this {
    this.addEnvironment('DKIM_KMS_KEY_ARN', key.keyArn);
    this.allow(
      mode === 'encrypt' ? 'EncryptWebhookSecrets' : 'DecryptWebhookSecrets',
      [mode === 'encrypt' ? 'kms:GenerateDataKey' : 'kms:Decrypt'],
      [key.keyArn],
      { StringEquals: { 'kms:EncryptionContext:purpose': webhookSecretPurpose } },
    );
    return this;
  }

  /**
   * BUCKET_NAME plus the given object access under one key prefix. A function that reads may also
   * list the bucket: only with s3:ListBucket does S3 answer a missing key with 404 (NotFound /
   * NoSuchKey) instead of 403, and that check carries no s3:prefix, so the grant cannot be narrowed
   * to a prefix. Listing shows key names (message uuids, avatar hashes), never content.
   */
  bindBucket(bucket: IBucket, prefix: ObjectPrefix, access: readonly ObjectAccess[]): this {
    this.addEnvironment('BUCKET_NAME', bucket.bucketName);
    const name = objectStatementNames[prefix];
    const objects = [bucket.arnForObjects(`${prefix}*`)];
    if (access.includes('read')) this.allow(`Read${name}`, ['s3:GetObject'], objects);
    if (access.includes('write')) this.allow(`Write${name}`, ['s3:PutObject'], objects);
    if (access.includes('delete')) this.allow(`Delete${name}`, ['s3:DeleteObject'], objects);
    if (access.includes('read') && !this.listsBucket) {
      this.allow('ListObjectKeysForNotFoundAnswers', ['s3:ListBucket'], [bucket.bucketArn]);
      this.listsBucket = true;
    }
    return this;
  }

  /**
   * DKIM_KMS_KEY_ARN plus encrypt or decrypt with the DKIM key. Envelope encryption (the AWS
   * Encryption SDK with the key as generator) encrypts with GenerateDataKey alone.
   */
  bindKmsKey(key: IKey, mode: 'encrypt' | 'decrypt' | 'encrypt-decrypt'): this {
    this.addEnvironment('DKIM_KMS_KEY_ARN', key.keyArn);
    if (mode !== 'decrypt') this.allow('EncryptDkimKeys', ['kms:GenerateDataKey'], [key.keyArn]);
    if (mode !== 'encrypt') this.allow('DecryptDkimKeys', ['kms:Decrypt'], [key.keyArn]);
    return this;
  }

  /** Takes keys out of the DKIM key pool (docs/domains.md, "Key pool"). */
  bindDkimKeyPool(table: ITable): this {
    // Besides pool keys, the items of a domain (`DOMAIN#…`): an add whose later step fails removes
    // the domain and keys it wrote, so nothing half-created is left behind.
    this.allow('TakeDkimPoolKeys', ['dynamodb:DeleteItem'], [table.tableArn], {
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [keys.dkimKeyPool, 'DOMAIN#*'] },
    });
    return this;
  }

  /**
   * MAIL_TRANSPORT=ses and SES_CONFIGURATION_SET plus sending (SES v2 SendEmail with raw content)
   * through that configuration set. The identities are every identity of the region: accounts add
   * their sending domains through the API at run time (docs/domains.md, "On AWS"); which account may
   * send as which domain is the service's check before any mail is queued.
   */
  bindSes(configurationSetName: string): this {
    this.addEnvironment('MAIL_TRANSPORT', 'ses');
    this.addEnvironment('SES_CONFIGURATION_SET', configurationSetName);
    const stack = Stack.of(this);
    const sesArn = (resource: string) =>
      stack.formatArn({ service: 'ses', resource, resourceName: undefined });
    this.allow(
      'SendMailThroughConfigurationSet',
      ['ses:SendEmail', 'ses:SendRawEmail'],
      [
        stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' }),
        sesArn(`configuration-set/${configurationSetName}`),
      ],
    );
    return this;
  }

  /**
   * MAIL_TRANSPORT plus, with SES, managing the domain identities that accounts add through the API
   * (their names are known only at run time, so the resource is every identity of the region).
   */
  bindSesIdentities(mailTransport: string): this {
    this.addEnvironment('MAIL_TRANSPORT', mailTransport);
    if (mailTransport !== 'ses') return this;
    const stack = Stack.of(this);
    this.allow(
      'ManageDomainIdentities',
      [
        'ses:CreateEmailIdentity',
        'ses:PutEmailIdentityMailFromAttributes',
        // A claim moves the domain: the identity takes the new holder's BYODKIM key.
        'ses:PutEmailIdentityDkimSigningAttributes',
        'ses:GetEmailIdentity',
        'ses:DeleteEmailIdentity',
      ],
      [stack.formatArn({ service: 'ses', resource: 'identity', resourceName: '*' })],
    );
    return this;
  }

  /** LINK_TOKEN_SECRET_ARN plus reading that secret: the key of the tokens in links of mail. */
  bindLinkKey(secretArn: string): this {
    this.addEnvironment('LINK_TOKEN_SECRET_ARN', secretArn);
    this.allow('ReadLinkTokenKey', ['secretsmanager:GetSecretValue'], [secretArn]);
    return this;
  }

  /** SMTP_SECRET_ARN plus reading that one secret (the relay's credentials, read at cold start). */
  bindSmtpSecret(secretArn: string): this {
    this.addEnvironment('SMTP_SECRET_ARN', secretArn);
    this.allow('ReadSmtpRelayCredentials', ['secretsmanager:GetSecretValue'], [secretArn]);
    return this;
  }
}
