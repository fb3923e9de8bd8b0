import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceMetrics } from './observability-metrics.ts';

export interface MonitoredFunction {
  readonly id: string;
  readonly function: IFunction;
  /** What a user loses while this function is throttled. */
  readonly impact: string;
}

export interface AlarmsProps {
  readonly api: apigateway.RestApi;
  readonly deadLetterQueue: IQueue;
  /** Where SES events that delivery-events could not record end up (EventBridge target DLQ, on-failure destination). */
  readonly eventsDeadLetterQueue: IQueue;
  readonly metrics: ServiceMetrics;
  readonly functions: readonly MonitoredFunction[];
  readonly alarmEmail: string | undefined;
  readonly maxReceiveCount: number;
  readonly webhooks: {
    readonly deadLetterQueue: IQueue;
    readonly streamFailureQueue: IQueue;
    readonly fanout: IFunction;
  };
  /** SES receipts the inbound function gave up on (docs/inbound.md). */
  readonly inboundDeadLetterQueue?: IQueue;
}

/** Webhook delivery failures (every failed attempt) in 15 minutes that raise the alarm. */
export const webhookFailureThreshold = 50;

/**
 * Alarms whose descriptions say what a user loses when they fire, all notifying one SNS topic
 * (subscribe an address with context `alarmEmail`, or anything else to the topic output).
 */
export class Alarms extends Construct {
  readonly topic: sns.Topic;
  readonly alarms: cloudwatch.Alarm[] = [];
  /** API 5xx responses as a percentage of requests (also on the dashboard). */
  readonly serverErrorRate: cloudwatch.MathExpression;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    this.topic = new sns.Topic(this, 'Topic', { displayName: 'svc-mail alarms', enforceSSL: true });
    // enforceSSL adds only a Deny for insecure transport; CloudWatch alarms publish as a service
    // principal, which this Allow admits for this account's alarms only (confused-deputy guard).
    const stack = Stack.of(this);
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowCloudWatchAlarmsOfThisAccount',
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    if (props.alarmEmail !== undefined) this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    const period = Duration.minutes(5);
    const { metrics } = props;

    // The dead-letter function drains the queue within seconds, so its depth stays at 0 while
    // messages fail; and SQS does not count redriven messages in NumberOfMessagesSent. Receipts
    // (the dead-letter function's poller receiving them) are what shows a failed send.
    this.add(
      'DeadLetterQueueReceived',
      props.deadLetterQueue.metricNumberOfMessagesReceived({ period, statistic: 'Sum' }),
      {
        threshold: 1,
        description:
          `Messages reached the dead-letter queue: the sender failed ${props.maxReceiveCount} times, so these ` +
          'messages will not reach their recipients (the dead-letter function marks them failed). ' +
          'Fix the cause; the senders can re-add them.',
      },
    );
    this.add(
      'DeadLetterQueueNotDrained',
      props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      {
        threshold: 1,
        evaluationPeriods: 3,
        description:
          'The dead-letter queue has not been drained for 15 minutes: the dead-letter function is failing, so ' +
          'messages the sender gave up on still show as queued or processing instead of failed.',
      },
    );
    this.add('FailedSends', metrics.messages('failed', period), {
      threshold: 1,
      description:
        'Messages ended with status failed (the relay refused them for good, the sender gave up, or SES ' +
        'rejected them): their recipients will not get them. The message history says why.',
    });
    // Nothing consumes the events dead-letter queue, so its depth is what counts.
    this.add(
      'DeliveryEventsDropped',
      props.eventsDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ period, statistic: 'Maximum' }),
      {
        threshold: 1,
        description:
          'SES delivery, bounce or complaint events could not be recorded and went to the events dead-letter ' +
          'queue: the affected messages keep a stale status (e.g. sent instead of bounced) and their webhooks ' +
          'do not fire. Fix the cause, then replay the events from the queue.',
      },
    );
    if (props.inboundDeadLetterQueue !== undefined) {
      this.add(
        'InboundDeadLetterQueueNotEmpty',
        props.inboundDeadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period,
          statistic: 'Maximum',
        }),
        {
          threshold: 1,
          description:
            'Received mail could not be stored for its account after 5 attempts: its raw message is in S3 ' +
            '(inbound/raw/), but it is not listed by POST /inbound/query-1.0 and no inbound.received event went ' +
            'out. Fix the cause, then redrive the inbound dead-letter queue to the inbound queue.',
        },
      );
    }
    // The bounce and complaint rates are alarmed on SES's own reputation metrics (reputation.ts).
    this.add(
      'WebhookDeadLetterQueueNotEmpty',
      props.webhooks.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period,
        statistic: 'Maximum',
      }),
      {
        threshold: 1,
        description:
          'Webhook events reached the dead-letter queue: a receiver failed all 10 attempts (about 75 h), or the ' +
          'delivery function crashed repeatedly. Those receivers did not get these events; fix the receiver or the ' +
          'cause, then replay the events (POST /webhook/replay-1.0, within 7 days).',
      },
    );
    this.add(
      'WebhookStreamFailures',
      props.webhooks.streamFailureQueue.metricApproximateNumberOfMessagesVisible({
        period,
        statistic: 'Maximum',
      }),
      {
        threshold: 1,
        description:
          'The webhook fan-out gave up on table stream records (after retries): the events of those message ' +
          "changes were not created, so no receiver gets them. The queue holds the records' positions; fix the " +
          'cause and re-drive them from the stream while it keeps them (24 h).',
      },
    );
    this.add('WebhookFanoutErrors', props.webhooks.fanout.metricErrors({ period, statistic: 'Sum' }), {
      threshold: 1,
      evaluationPeriods: 3,
      description:
        'The webhook fan-out keeps failing: webhook events are delayed (the stream holds them for 24 h) and ' +
        'receivers get them late or, past 24 h, not at all.',
    });
    this.add('WebhookDeliveryFailures', metrics.webhooks('failures', Duration.minutes(15)), {
      threshold: webhookFailureThreshold,
      description:
        `${webhookFailureThreshold} or more webhook delivery attempts failed in 15 minutes: receivers are down ` +
        "or refusing; their events are retried for about 75 h and then dead-lettered. Check the endpoints' " +
        'attempts (POST /webhook/query-1.0 with webhook_id).',
    });
    const serverErrorRate = new cloudwatch.MathExpression({
      expression: 'IF(requests > 0, 100 * errors / requests, 0)',
      usingMetrics: {
        errors: props.api.metricServerError({ period, statistic: 'Sum' }),
        requests: props.api.metricCount({ period, statistic: 'Sum' }),
      },
      period,
      label: 'API 5xx rate (%)',
    });
    this.serverErrorRate = serverErrorRate;
    this.add('Api5xxRate', serverErrorRate, {
      threshold: 5,
      evaluationPeriods: 2,
      description:
        'More than 5% of API requests end in a 5xx (codes 2-5): callers cannot submit, query or delete ' +
        'messages, or manage domains, and must retry.',
    });
    for (const monitored of props.functions) {
      this.add(
        `Throttles-${monitored.id}`,
        monitored.function.metric('Throttles', { period, statistic: 'Sum' }),
        {
          threshold: 1,
          description: `Lambda is throttling ${monitored.id} (concurrency limit): ${monitored.impact}.`,
        },
      );
    }
  }

  private add(
    id: string,
    metric: cloudwatch.IMetric,
    options: { threshold: number; evaluationPeriods?: number; description: string },
  ): void {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
  }
}
