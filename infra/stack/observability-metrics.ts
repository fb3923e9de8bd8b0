import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import {
  type CountedStatus,
  type DomainCounted,
  defaultNamespace,
  domainMetric,
  latencyMetric,
  messageMetric,
  webhookMetric,
} from '../../shared/platform/observability/metric-names.ts';

/**
 * The service's own metrics (embedded metric format from Powertools Metrics, names in
 * shared/platform/observability/metric-names.ts) as CloudWatch metric objects for the dashboard and alarms.
 * Every function publishes under one namespace with the dimension `service` = the stack name.
 */
export class ServiceMetrics {
  readonly namespace = defaultNamespace;

  readonly service: string;

  constructor(service: string) {
    this.service = service;
  }

  /** The environment that makes the functions publish where this class reads. */
  environment(): Record<string, string> {
    return { POWERTOOLS_METRICS_NAMESPACE: this.namespace, POWERTOOLS_SERVICE_NAME: this.service };
  }

  messages(status: CountedStatus, period = Duration.minutes(5)): cloudwatch.Metric {
    return this.metric(messageMetric[status], { period, label: status });
  }

  webhooks(kind: keyof typeof webhookMetric, period = Duration.minutes(5)): cloudwatch.Metric {
    return this.metric(webhookMetric[kind], { period, label: `webhook ${kind}` });
  }

  /** What the statistics consumer counted for one sending domain (dimension `domain`). */
  domain(counted: DomainCounted, domain: string, period = Duration.hours(1)): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: domainMetric[counted],
      dimensionsMap: { service: this.service, domain },
      statistic: 'Sum',
      period,
      unit: cloudwatch.Unit.COUNT,
      label: `${domain} ${counted}`,
    });
  }

  /**
   * A metric-math search over every sending domain the consumer has counted: one line per domain,
   * whether or not the stack knows the domain (mail through an SMTP relay names no SES identity).
   */
  everyDomain(counted: DomainCounted, period = Duration.hours(1)): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: `SEARCH('{${this.namespace},domain,service} MetricName="${domainMetric[counted]}" service="${this.service}"', 'Sum', ${period.toSeconds()})`,
      usingMetrics: {},
      label: '',
      period,
    });
  }

  latency(route: string, statistic: string, period = Duration.minutes(5)): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: latencyMetric,
      dimensionsMap: { service: this.service, route },
      statistic,
      period,
      unit: cloudwatch.Unit.MILLISECONDS,
      label: `${route} ${statistic}`,
    });
  }

  private metric(name: string, options: { period: Duration; label: string }): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.namespace,
      metricName: name,
      dimensionsMap: { service: this.service },
      statistic: 'Sum',
      period: options.period,
      unit: cloudwatch.Unit.COUNT,
      label: options.label,
    });
  }
}
