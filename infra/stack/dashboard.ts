import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Route } from '../../shared/platform/http/route.ts';
import type { ServiceMetrics } from './observability-metrics.ts';
import { reputationThresholds } from './reputation.ts';

/** The levels at which Amazon SES reviews an account (docs/deliverability.md), as percentages. */
const reviewLevels = { bounceRate: 5, complaintRate: 0.1 } as const;

export interface DashboardProps {
  readonly name: string;
  readonly metrics: ServiceMetrics;
  /** The sending domains the stack knows (its SES identities): one rate line each. */
  readonly sendingDomains: readonly string[];
  readonly routes: readonly Route[];
  readonly serverErrorRate: cloudwatch.IMetric;
  readonly deadLetterQueue: IQueue;
  readonly alarms: readonly cloudwatch.IAlarm[];
}

/**
 * One CloudWatch dashboard named after the stack: the message pipeline (accepted → sent →
 * delivered, and what went wrong), bounce and complaint rates per sending domain (the figures of
 * POST /stats/query-1.0, with SES's review levels and the alarms' levels as guard lines), webhooks,
 * latency by route, the API's 5xx rate, the dead-letter queue and the state of every alarm.
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
    this.dashboard.addWidgets(...domainRateWidgets(props));
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

/**
 * Per sending domain, hourly: bounce rate = bounced ÷ sent and complaint rate = complained ÷
 * delivered, in percent, as the stats route defines them (docs/stats.md), for each domain the stack
 * knows; and, for every domain counted (known or not), the sent and bounced counts by search.
 */
function domainRateWidgets(props: DashboardProps): cloudwatch.IWidget[] {
  const { metrics } = props;
  const rate = (domain: string, index: number, part: 'bounced' | 'complained', whole: 'sent' | 'delivered') =>
    new cloudwatch.MathExpression({
      expression: `IF(w${index} > 0, 100 * p${index} / w${index}, 0)`,
      usingMetrics: {
        [`p${index}`]: metrics.domain(part, domain),
        [`w${index}`]: metrics.domain(whole, domain),
      },
      label: domain,
      period: Duration.hours(1),
    });
  const guard = (label: string, value: number, color: string): cloudwatch.HorizontalAnnotation => ({
    label,
    value,
    color,
  });
  const widgets: cloudwatch.IWidget[] = [];
  if (props.sendingDomains.length > 0) {
    widgets.push(
      new cloudwatch.GraphWidget({
        title: 'Bounce rate by sending domain (%, hourly: bounced ÷ sent)',
        width: 12,
        left: props.sendingDomains.map((domain, index) => rate(domain, index, 'bounced', 'sent')),
        leftAnnotations: [
          guard('alarm level', reputationThresholds.bounceRate * 100, '#ff7f0e'),
          guard('SES review', reviewLevels.bounceRate, '#d62728'),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: 'Complaint rate by sending domain (%, hourly: complained ÷ delivered)',
        width: 12,
        left: props.sendingDomains.map((domain, index) => rate(domain, index, 'complained', 'delivered')),
        leftAnnotations: [
          guard('alarm level', reputationThresholds.complaintRate * 100, '#ff7f0e'),
          guard('SES review', reviewLevels.complaintRate, '#d62728'),
        ],
      }),
    );
  }
  widgets.push(
    new cloudwatch.GraphWidget({
      title: 'Sent by sending domain (hourly, every domain counted)',
      width: 12,
      left: [metrics.everyDomain('sent')],
    }),
    new cloudwatch.GraphWidget({
      title: 'Bounced and complained by sending domain (hourly, every domain counted)',
      width: 12,
      left: [metrics.everyDomain('bounced'), metrics.everyDomain('complained')],
    }),
  );
  return widgets;
}
