import { fileURLToPath } from 'node:url';
import { Aws, CfnOutput, CfnRule, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ses from 'aws-cdk-lib/aws-ses';
import type { Construct } from 'constructs';
import type { AccessNeeds, ObjectPrefix } from '../../shared/platform/access.ts';
import type { Route } from '../../shared/platform/http/route.ts';
import type { Worker } from '../../shared/platform/worker.ts';
import { type RouteId, routeDetails, routes } from '../../shared/routes.ts';
import { type FunctionId, scheduledRoutes, workers } from '../../shared/workers.ts';
import type { ServiceConfig } from '../config.ts';
import {
  countingStreamDefinition,
  inboundQueueDefinition,
  queueDefinition,
  tableStreamDefinition,
  webhookQueueDefinition,
} from '../resources/definitions.ts';
import { Alarms } from './alarms.ts';
import { ServiceApi } from './api.ts';
import { ConsoleHosting, executeApiOrigin } from './console-hosting.ts';
import { ServiceDashboard } from './dashboard.ts';
import { Firewall } from './firewall.ts';
import { functionAccess, workerImpact } from './function-access.ts';
import { InboundReceiving } from './inbound.ts';
import { type Acknowledgement, acknowledgeFindings } from './nag-acknowledgements.ts';
import { ServiceMetrics } from './observability-metrics.ts';
import { ReputationGuard } from './reputation.ts';
import { assertEntriesExist, ServiceFunction } from './service-function.ts';
import { SmtpSubmission } from './smtp-submission.ts';
import { routePartOf, StackParts, workerPart } from './stack-parts.ts';
import { Storage } from './storage.ts';
import { untrustedInputConcurrencyOf } from './untrusted-input.ts';

export interface MailServiceStackProps extends StackProps {
  readonly config: ServiceConfig;
}

/**
 * The origins browsers may call the API from: corsOrigins, plus the console's custom domain when
 * corsOrigins is a list (with `*` every origin is allowed already). CloudFront's generated domain
 * cannot be added here: the console's CSP names the API, so the API cannot name the distribution
 * without a dependency cycle; docs/deploy.md says to add the ConsoleUrl output to corsOrigins.
 */
export function allowedOrigins(config: ServiceConfig): string[] {
  if (config.corsOrigins.includes('*') || config.console.domainName === undefined) return config.corsOrigins;
  return [...new Set([...config.corsOrigins, `https://${config.console.domainName}`])];
}

/** SES event types published to EventBridge for the delivery-events function. */
export const sesEventTypes = [
  ses.EmailSendingEvent.DELIVERY,
  ses.EmailSendingEvent.BOUNCE,
  ses.EmailSendingEvent.COMPLAINT,
  ses.EmailSendingEvent.REJECT,
  ses.EmailSendingEvent.DELIVERY_DELAY,
  ses.EmailSendingEvent.RENDERING_FAILURE,
];
/** The matching EventBridge detail types. */
export const sesDetailTypes = [
  'Email Delivered',
  'Email Bounced',
  'Email Complaint Received',
  'Email Rejected',
  'Email Delivery Delayed',
  'Email Rendering Failed',
];

const httpTimeout = Duration.seconds(25);
/** Queue consumers run with the timeout the queues' visibility (6 ×) is sized for. */
const queueConsumers = new Set<Worker['trigger']>(['send-queue', 'dead-letter-queue']);
const workerTimeout = Duration.seconds(60);
/** Worker timeouts that their trigger's settings are sized for. */
const workerTimeouts: Partial<Record<Worker['trigger'], Duration>> = {
  'webhook-queue': Duration.seconds(webhookQueueDefinition.deliveryTimeoutSeconds),
  'table-stream': Duration.seconds(tableStreamDefinition.fanoutTimeoutSeconds),
  'table-stream-counting': Duration.seconds(countingStreamDefinition.timeoutSeconds),
  'inbound-queue': Duration.seconds(inboundQueueDefinition.functionTimeoutSeconds),
};
/** Longer than the gateway's 29 s: these also run on a schedule (docs/avatars.md: at least 60 s). */
const timeouts: Partial<Record<FunctionId, Duration>> = { 'keepalive-run': Duration.seconds(60) };
const memory: Partial<Record<FunctionId, number>> = {
  // RSA-2048 key generation and DKIM signing are CPU-bound; Lambda CPU scales with memory.
  'dkim-set-algorithm': 1024,
  sender: 1024,
  // Parsing a received message of up to 40 MB: memory for one message, CPU for the decoding.
  inbound: 1024,
};

/**
 * The whole service on AWS: one Lambda per route and per worker (looping over shared/routes.ts
 * and shared/workers.ts, which gather every wing's declarations), the REST API with its gateway responses and WAF, the table, queues,
 * bucket and DKIM key, the SES configuration set with events to EventBridge, the schedules and
 * the alarms. Environment-agnostic: no lookups, so `cdk synth` needs no credentials.
 */
export class MailServiceStack extends Stack {
  readonly functions = new Map<FunctionId, ServiceFunction>();
  readonly storage: Storage;
  /** The key of the tokens in links of mail (one-click unsubscribe): 32 random bytes, base64. */
  readonly linkKey: secretsmanager.Secret;
  readonly api: ServiceApi;
  readonly firewall: Firewall;
  readonly alarms: Alarms;
  readonly dashboard: ServiceDashboard;
  readonly serviceMetrics: ServiceMetrics;
  readonly configurationSet: ses.ConfigurationSet;
  readonly sesIdentities: ses.EmailIdentity[];
  readonly reputation: ReputationGuard;
  readonly console: ConsoleHosting;
  readonly inbound: InboundReceiving;
  readonly smtpSubmission: SmtpSubmission | undefined;
  readonly acknowledgements: Acknowledgement[];
  /** The nested stacks: functions by route group and the workers', and the API. */
  readonly parts: StackParts;

  constructor(scope: Construct, id: string, props: MailServiceStackProps) {
    super(scope, id, props);
    const { config } = props;
    assertEntriesExist([...routes.map((route) => route.id), ...workers.map((worker) => worker.id)]);
    const logRetention = config.logRetentionDays as logs.RetentionDays;
    this.parts = new StackParts(this);

    this.storage = new Storage(this, 'Storage', {
      retentionDays: config.retentionDays,
      avatarTtlSeconds: config.avatarTtlSeconds,
    });
    // 43 characters of A-Z, a-z and 0-9 decode from base64 to 32 bytes carrying about 256 random bits.
    this.linkKey = new secretsmanager.Secret(this, 'LinkTokenKey', {
      description:
        'Key of the sealed tokens in links of sent mail (one-click unsubscribe); base64 of 32 bytes',
      generateSecretString: { passwordLength: 43, excludePunctuation: true, includeSpace: false },
    });
    this.configurationSet = new ses.ConfigurationSet(this, 'ConfigurationSet', {
      tlsPolicy: ses.ConfigurationSetTlsPolicy.REQUIRE,
      reputationMetrics: true,
      // SES's own suppression list is one list for every tenant: with `sesAccountSuppression` it is
      // the backstop behind the per-account lists; without (the default), this set's mail is never
      // suppressed by it, whatever the AWS account's setting (docs/deliverability.md).
      ...(config.sesAccountSuppression
        ? { suppressionReasons: ses.SuppressionReasons.BOUNCES_AND_COMPLAINTS }
        : { disableSuppressionList: true }),
    });
    this.configurationSet.addEventDestination('ToEventBridge', {
      destination: ses.EventDestination.eventBus(
        events.EventBus.fromEventBusName(this, 'DefaultBus', 'default'),
      ),
      events: sesEventTypes,
    });
    // The SES identities the sender may send as: created here, so the grant names exactly them.
    this.sesIdentities =
      config.mailTransport === 'ses'
        ? config.sesIdentities.map(
            (identity, index) =>
              new ses.EmailIdentity(this, `SesIdentity${index}`, {
                identity: identity.includes('@')
                  ? ses.Identity.email(identity)
                  : ses.Identity.domain(identity),
                configurationSet: this.configurationSet,
                // The custom MAIL FROM domain that aligns SPF (docs/deploy.md), for domain identities.
                ...(identity.includes('@')
                  ? {}
                  : {
                      mailFromDomain: `${config.mailFromSubdomain}.${identity}`,
                      mailFromBehaviorOnMxFailure: ses.MailFromBehaviorOnMxFailure.REJECT_MESSAGE,
                    }),
              }),
          )
        : [];
    if (config.sesRegion !== undefined) {
      new CfnRule(this, 'DeployInSesRegion', {
        assertions: [
          {
            assert: Fn.conditionEquals(Aws.REGION, config.sesRegion),
            assertDescription: `Context sesRegion is ${config.sesRegion}: deploy this stack in that region (the SES configuration set and event publishing live in the stack's region).`,
          },
        ],
      });
    }

    // Powertools publishes every metric under this stack's name (dimension `service`).
    this.serviceMetrics = new ServiceMetrics(this.stackName);
    const common = { SERVER_TZ: config.serverTimeZone, ...this.serviceMetrics.environment() };
    const corsOrigins = allowedOrigins(config);
    const http = {
      ...common,
      BLOCKED_CIDRS: config.blockedCidrs.join(','),
      RATE_LIMIT_RPS: String(config.rateLimitRps),
      RATE_LIMIT_BURST: String(config.rateLimitBurst),
      CORS_ORIGINS: corsOrigins.join(','),
    };
    const auth = {
      AUTH_ISSUER: config.authIssuer,
      AUTH_AUDIENCE: config.authAudience,
      AUTH_JWKS_URL: config.authJwksUrl,
      AUTH_ACCOUNT_CLAIM: config.authAccountClaim,
      ...(config.authRequiredTyp === undefined ? {} : { AUTH_REQUIRED_TYP: config.authRequiredTyp }),
      ...(config.authRequiredTokenUse === undefined
        ? {}
        : { AUTH_REQUIRED_TOKEN_USE: config.authRequiredTokenUse }),
    };

    for (const route of routes as readonly Route[]) {
      const fn = new ServiceFunction(this.parts.functions(routePartOf(route)), `Route-${route.id}`, {
        functionId: route.id,
        description: `${route.method} ${route.path}: ${routeDetails[route.id as RouteId].summary}`,
        timeout: timeouts[route.id as FunctionId] ?? httpTimeout,
        memorySize: memory[route.id as FunctionId],
        logRetention,
        environment: route.public ? http : { ...http, ...auth },
        reservedConcurrency: untrustedInputConcurrencyOf(route.id as FunctionId, config),
      });
      this.grant(fn, functionAccess[route.id as FunctionId], config);
      this.functions.set(route.id as FunctionId, fn);
    }
    for (const worker of workers as readonly Worker[]) {
      const fn = new ServiceFunction(this.parts.functions(workerPart), `Worker-${worker.id}`, {
        functionId: worker.id,
        description: `${worker.trigger}: ${worker.summary}`,
        timeout:
          workerTimeouts[worker.trigger] ??
          (queueConsumers.has(worker.trigger)
            ? Duration.seconds(queueDefinition.senderTimeoutSeconds)
            : workerTimeout),
        memorySize: memory[worker.id as FunctionId],
        logRetention,
        environment: common,
      });
      this.grant(fn, functionAccess[worker.id as FunctionId], config);
      this.functions.set(worker.id as FunctionId, fn);
      this.connectTrigger(worker, fn, config);
    }
    this.inbound = new InboundReceiving(this, 'Inbound', {
      bucket: this.storage.bucket,
      queue: this.storage.inboundQueue,
      deadLetterQueue: this.storage.inboundDeadLetterQueue,
      receiving: config.receiving,
    });
    // Received mail, and the sender's SES id records that thread replies, live `retentionDays`.
    for (const id of ['inbound', 'sender'] as const)
      this.functionById(id).addEnvironment('RETENTION_DAYS', String(config.retentionDays));
    for (const scheduled of scheduledRoutes) {
      this.schedule(this.functionById(scheduled.routeId), scheduled.everyMinutes);
    }

    this.api = new ServiceApi(this.parts.api(), 'Http', {
      name: this.stackName,
      routes,
      functionFor: (route) => this.functionById(route.id as FunctionId).function,
      corsOrigins,
      throttleRps: config.stageThrottleRps,
      throttleBurst: config.stageThrottleBurst,
      logRetention,
    });
    // The base of the links in mail: known once the API exists, so set on the (worker) functions that
    // seal links only now; the API never depends on a worker, so this makes no cycle.
    for (const [id, needs] of Object.entries(functionAccess)) {
      if (needs.linkTokens === 'seal') {
        this.functionById(id as FunctionId).addEnvironment(
          'PUBLIC_API_URL',
          config.unsubscribeBaseUrl ?? this.api.api.url,
        );
      }
    }
    this.console = new ConsoleHosting(this, 'Console', {
      settings: config.console,
      apiUrl: this.api.api.url,
      apiOrigin: executeApiOrigin(this.api.api.restApiId),
      accountClaim: config.authAccountClaim,
      accessLogBucket: this.storage.accessLogBucket,
      logRetention,
    });
    // Beside the stage it protects, so cdk-nag (AwsSolutions-APIG3) sees the association.
    this.firewall = new Firewall(this.parts.api(), 'Firewall', {
      stageArn: this.api.api.deploymentStage.stageArn,
      blockedCidrs: config.blockedCidrs,
      rateLimitRps: config.rateLimitRps,
    });

    this.alarms = new Alarms(this, 'Alarms', {
      api: this.api.api,
      deadLetterQueue: this.storage.deadLetterQueue,
      eventsDeadLetterQueue: this.storage.eventsDeadLetterQueue,
      metrics: this.serviceMetrics,
      webhooks: {
        deadLetterQueue: this.storage.webhookDeadLetterQueue,
        streamFailureQueue: this.storage.streamFailureQueue,
        fanout: this.functionById('webhook-fanout').function,
      },
      inboundDeadLetterQueue: this.storage.inboundDeadLetterQueue,
      maxReceiveCount: queueDefinition.maxReceiveCount,
      alarmEmail: config.alarmEmail,
      functions: [
        ...(routes as readonly Route[]).map((route) => ({
          id: route.id,
          function: this.functionById(route.id as FunctionId).function,
          impact: `callers of ${route.method} ${route.path} get errors instead of: ${routeDetails[route.id as RouteId].summary.toLowerCase()}`,
        })),
        ...(workers as readonly Worker[]).map((worker) => ({
          id: worker.id,
          function: this.functionById(worker.id as FunctionId).function,
          impact: workerImpact[worker.id as keyof typeof workerImpact],
        })),
      ],
    });

    this.reputation = new ReputationGuard(this, 'Reputation', {
      topic: this.alarms.topic,
      accountSuppression: config.sesAccountSuppression,
    });
    this.dashboard = new ServiceDashboard(this, 'Dashboard', {
      name: this.stackName,
      metrics: this.serviceMetrics,
      // The SES identities' domains (an address identity sends from its domain).
      sendingDomains: [
        ...new Set(config.sesIdentities.map((identity) => identity.split('@').pop() as string)),
      ],
      routes,
      serverErrorRate: this.alarms.serverErrorRate,
      deadLetterQueue: this.storage.deadLetterQueue,
      alarms: [...this.alarms.alarms, this.reputation.bounceRateAlarm, this.reputation.complaintRateAlarm],
    });

    if (config.smtpSubmission !== undefined) {
      this.smtpSubmission = new SmtpSubmission(this.parts.submission(), 'SmtpSubmission', {
        settings: config.smtpSubmission,
        apiUrl: this.api.api.url,
        logRetentionDays: logRetention,
        repositoryRoot: fileURLToPath(new URL('../..', import.meta.url)),
      });
      for (const alarm of this.smtpSubmission.alarms) alarm.addAlarmAction(new SnsAction(this.alarms.topic));
      new CfnOutput(this, 'SmtpSubmissionHost', {
        value: this.smtpSubmission.loadBalancer.loadBalancerDnsName,
        description: 'Publish a CNAME to this name as the submission host (docs/smtp.md, "On AWS")',
      });
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.api.url, description: 'Base URL of the API' });
    new CfnOutput(this, 'TableName', {
      value: this.storage.table.tableName,
      description: 'TABLE_NAME for npm run admin',
    });
    new CfnOutput(this, 'QueueUrl', { value: this.storage.queue.queueUrl });
    new CfnOutput(this, 'QueueName', { value: this.storage.queue.queueName });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.storage.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: this.storage.webhookDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'BucketName', { value: this.storage.bucket.bucketName });
    new CfnOutput(this, 'ConfigurationSetName', { value: this.configurationSet.configurationSetName });
    new CfnOutput(this, 'DkimKeyArn', { value: this.storage.dkimKey.keyArn });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarms.topic.topicArn });
    new CfnOutput(this, 'EventsDeadLetterQueueUrl', { value: this.storage.eventsDeadLetterQueue.queueUrl });
    new CfnOutput(this, 'DashboardName', { value: this.stackName });
    new CfnOutput(this, 'ConsoleUrl', {
      value: `${this.console.url}/`,
      description: 'The web console; register it as the redirect URI of the console client at the issuer',
    });
    new CfnOutput(this, 'ConsoleClientId', { value: config.console.clientId });
    new CfnOutput(this, 'ConsoleIssuer', { value: config.console.issuer });
    new CfnOutput(this, 'ConsoleBucketName', { value: this.console.bucket.bucketName });
    new CfnOutput(this, 'ConsoleDistributionId', { value: this.console.distribution.distributionId });
    new CfnOutput(this, 'InboundDeadLetterQueueUrl', { value: this.storage.inboundDeadLetterQueue.queueUrl });
    if (this.inbound.ruleSet !== undefined) {
      new CfnOutput(this, 'InboundMxRecord', {
        value: `10 inbound-smtp.${Aws.REGION}.amazonaws.com`,
        description: 'Publish as the MX record of each receiving domain (docs/inbound.md)',
      });
    }

    this.acknowledgements = acknowledgeFindings(this, config);
  }

  functionById(id: FunctionId): ServiceFunction {
    const fn = this.functions.get(id);
    if (fn === undefined) throw new Error(`No function ${id} in the stack`);
    return fn;
  }

  /** Turns one row of the access table into environment variables and IAM statements. */
  private grant(fn: ServiceFunction, needs: AccessNeeds, config: ServiceConfig): void {
    const { table, queue, bucket, dkimKey } = this.storage;
    if (needs.table !== undefined) fn.bindTable(table, needs.table, this.storage.indexNames);
    if (needs.queue === 'send') fn.bindQueue(queue, 'QUEUE_URL', 'send');
    for (const [prefix, access] of Object.entries(needs.objects ?? {})) {
      fn.bindBucket(bucket, prefix as ObjectPrefix, access);
    }
    if (needs.dkimKey !== undefined) fn.bindKmsKey(dkimKey, needs.dkimKey);
    if (needs.dkimKeyPool === 'take') fn.bindDkimKeyPool(table);
    if (needs.webhookSecrets !== undefined) fn.bindWebhookSecretKey(dkimKey, needs.webhookSecrets);
    if (needs.webhookQueue === 'send') fn.bindQueue(this.storage.webhookQueue, 'WEBHOOK_QUEUE_URL', 'send');
    if (needs.webhookDeadLetterQueue === 'send') {
      fn.bindQueue(this.storage.webhookDeadLetterQueue, 'WEBHOOK_DEAD_LETTER_QUEUE_URL', 'send');
    }
    if (needs.mail === true) {
      fn.addEnvironment('MAIL_FROM_SUBDOMAIN', config.mailFromSubdomain);
      if (config.mailTransport === 'ses') {
        fn.bindSes(this.configurationSet.configurationSetName);
      } else {
        fn.addEnvironment('MAIL_TRANSPORT', 'smtp');
        fn.addEnvironment('SMTP_URL', config.smtpUrl as string);
        if (config.smtpSecretArn !== undefined) fn.bindSmtpSecret(config.smtpSecretArn);
      }
    }
    if (needs.composes === true) fn.addEnvironment('MAIL_TRANSPORT', config.mailTransport);
    if (needs.sesIdentities === true) fn.bindSesIdentities(config.mailTransport);
    if (needs.linkTokens !== undefined) fn.bindLinkKey(this.linkKey.secretArn);
    if (needs.avatars === true) {
      fn.addEnvironment('GRAVATAR_BASE_URL', config.gravatarBaseUrl);
      fn.addEnvironment('AVATAR_TTL_SECONDS', String(config.avatarTtlSeconds));
    }
  }

  /** An EventBridge rule invoking the function directly (a "Scheduled Event", not an API Gateway event). */
  private schedule(fn: ServiceFunction, everyMinutes: number): void {
    new events.Rule(Stack.of(fn), `Schedule-${fn.functionId}`, {
      description: `Runs ${fn.functionId} every ${everyMinutes} minute(s)`,
      schedule: events.Schedule.rate(Duration.minutes(everyMinutes)),
      targets: [new targets.LambdaFunction(fn.function, { retryAttempts: 2 })],
    });
  }

  private connectTrigger(worker: Worker, fn: ServiceFunction, config: ServiceConfig): void {
    const { queue, deadLetterQueue } = this.storage;
    switch (worker.trigger) {
      case 'send-queue':
        fn.bindQueue(queue, 'QUEUE_URL', 'consume');
        fn.function.addEventSource(
          new SqsEventSource(queue, {
            batchSize: queueDefinition.batchSize,
            reportBatchItemFailures: true,
            // Bounds the sending rate toward SES; raise with your SES sending quota.
            maxConcurrency: config.senderConcurrency,
          }),
        );
        return;
      case 'dead-letter-queue':
        fn.bindQueue(deadLetterQueue, 'DEAD_LETTER_QUEUE_URL', 'consume');
        fn.function.addEventSource(
          new SqsEventSource(deadLetterQueue, {
            batchSize: queueDefinition.batchSize,
            reportBatchItemFailures: true,
            maxConcurrency: config.deadLetterConcurrency,
          }),
        );
        return;
      case 'schedule':
        this.schedule(fn, worker.everyMinutes ?? 1);
        return;
      case 'table-stream':
        // The outbox: every committed change, retried (halving the batch) and, as a last resort,
        // described in the failure queue, which an alarm watches.
        fn.function.addEventSource(
          new DynamoEventSource(this.storage.table, {
            startingPosition: lambda.StartingPosition.TRIM_HORIZON,
            batchSize: tableStreamDefinition.batchSize,
            maxBatchingWindow: Duration.seconds(tableStreamDefinition.maxBatchingWindowSeconds),
            bisectBatchOnError: true,
            reportBatchItemFailures: true,
            retryAttempts: tableStreamDefinition.retryAttempts,
            maxRecordAge: Duration.hours(tableStreamDefinition.maxRecordAgeHours),
            onFailure: new SqsDlq(this.storage.streamFailureQueue),
          }),
        );
        return;
      case 'table-stream-counting':
        // Exactness first (docs/stats.md): in order per shard, one batch at a time, the shard id in
        // the event (tumbling window), and a failing batch retried whole, never bisected or skipped
        // (retry attempts and record age unlimited: the stream's own 24 h bound them). Records the
        // stream drops after 24 h are described in the failure queue, which an alarm watches.
        fn.function.addEventSource(
          new DynamoEventSource(this.storage.table, {
            startingPosition: lambda.StartingPosition.TRIM_HORIZON,
            batchSize: countingStreamDefinition.batchSize,
            maxBatchingWindow: Duration.seconds(countingStreamDefinition.maxBatchingWindowSeconds),
            tumblingWindow: Duration.seconds(countingStreamDefinition.tumblingWindowSeconds),
            bisectBatchOnError: false,
            parallelizationFactor: 1,
            reportBatchItemFailures: true,
            retryAttempts: -1,
            onFailure: new SqsDlq(this.storage.streamFailureQueue),
          }),
        );
        return;
      case 'webhook-queue':
        fn.bindQueue(this.storage.webhookQueue, 'WEBHOOK_QUEUE_URL', 'consume');
        fn.function.addEventSource(
          new SqsEventSource(this.storage.webhookQueue, {
            batchSize: webhookQueueDefinition.batchSize,
            reportBatchItemFailures: true,
            // The cap on webhook work: slow or failing receivers of one account cannot take the
            // region's Lambda concurrency from the API and the sender. A cap, not a reservation, so
            // nothing is taken from the account's unreserved pool (docs/webhooks.md, "On AWS").
            maxConcurrency: config.webhookConcurrency,
          }),
        );
        return;
      case 'inbound-queue':
        // One message at a time inside a batch (up to 40 MB each); failures come back alone.
        fn.bindQueue(this.storage.inboundQueue, 'INBOUND_QUEUE_URL', 'consume');
        fn.function.addEventSource(
          new SqsEventSource(this.storage.inboundQueue, {
            batchSize: inboundQueueDefinition.batchSize,
            reportBatchItemFailures: true,
            // Hostile mail parses within its own budget and this cap (docs/security.md, "Limits").
            maxConcurrency: config.inboundConcurrency,
          }),
        );
        return;
      case 'ses-events':
        // An event the function failed on after Lambda's two retries is kept, not dropped.
        fn.function.configureAsyncInvoke({
          retryAttempts: 2,
          onFailure: new SqsDestination(this.storage.eventsDeadLetterQueue),
        });
        new events.Rule(Stack.of(fn), 'SesEvents', {
          description: 'SES delivery, bounce and complaint events of this configuration set',
          eventPattern: {
            source: ['aws.ses'],
            detailType: sesDetailTypes,
            detail: {
              mail: { tags: { 'ses:configuration-set': [this.configurationSet.configurationSetName] } },
            },
          },
          // Events EventBridge could not hand to Lambda at all land in the same queue.
          targets: [
            new targets.LambdaFunction(fn.function, {
              retryAttempts: 8,
              deadLetterQueue: this.storage.eventsDeadLetterQueue,
            }),
          ],
        });
        return;
    }
  }
}
