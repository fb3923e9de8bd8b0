import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Route } from '../../shared/routes.ts';
import type { ServiceMetrics } from './observability-metrics.ts';

export interface DashboardProps {
  readonly name: string;
  readonly metrics: ServiceMetrics;
  readonly routes: readonly Route[];
  readonly serverErrorRate: cloudwatch.IMetric;
  readonly deadLetterQueue: IQueue;
  readonly alarms: readonly cloudwatch.IAlarm[];
}

/**
 * One CloudWatch dashboard named after the stack: the message pipeline (accepted → sent →
 * delivered, and what went wrong), webhooks, latency by route, the API's 5xx rate, the dead-letter
 * queue and the state of every alarm.
 */
export class ServiceDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const { metrics } = props;
    const period = Duration.minutes(5);
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: props.name,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Messages: accepted, sent, delivered',
        width: 12,
        left: (['accepted', 'sent', 'delivered'] as const).map((status) => metrics.messages(status, period)),
      }),
      new cloudwatch.GraphWidget({
        title: 'Messages: bounced, complained, suppressed, failed',
        width: 12,
        left: (['bounced', 'complained', 'suppressed', 'failed'] as const).map((status) =>
          metrics.messages(status, period),
        ),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Webhooks: attempts, failures, dead-lettered',
        width: 8,
        left: [
          metrics.webhooks('deliveries', period),
          metrics.webhooks('failures', period),
          metrics.webhooks('deadLettered', period),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'API 5xx rate (%)',
        width: 8,
        left: [props.serverErrorRate],
      }),
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queue: received and waiting',
        width: 8,
        left: [
          props.deadLetterQueue.metricNumberOfMessagesReceived({
            period,
            statistic: 'Sum',
            label: 'received',
          }),
          props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            period,
            statistic: 'Maximum',
            label: 'waiting',
          }),
        ],
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Handler latency p50 by route (ms)',
        width: 12,
        left: props.routes.map((route) => metrics.latency(`${route.method} ${route.path}`, 'p50', period)),
      }),
      new cloudwatch.GraphWidget({
        title: 'Handler latency p99 by route (ms)',
        width: 12,
        left: props.routes.map((route) => metrics.latency(`${route.method} ${route.path}`, 'p99', period)),
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: [...props.alarms] }),
    );
  }
}
