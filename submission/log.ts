/**
 * Structured lines in the shape of Powertools' Logger, and CloudWatch embedded-metric lines for
 * connections, messages and rejections by reason (docs/smtp.md, "Operating it"). Never a key,
 * a message body or an address's local part in a line.
 */
export type LogSink = (line: string) => void;

export const namespace = 'svc-mail';
export const service = 'smtp-submission';

export function logLine(
  sink: LogSink,
  level: 'INFO' | 'WARN' | 'ERROR',
  message: string,
  fields: object = {},
) {
  sink(JSON.stringify({ level, message, service, timestamp: new Date().toISOString(), ...fields }));
}

export type SubmissionMetric = 'SmtpConnections' | 'SmtpMessages' | 'SmtpRejections' | 'SmtpAuthFailures';

export function metricLine(sink: LogSink, metric: SubmissionMetric, reason?: string): void {
  const dimensions = reason === undefined ? [['service']] : [['service'], ['service', 'reason']];
  sink(
    JSON.stringify({
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          { Namespace: namespace, Dimensions: dimensions, Metrics: [{ Name: metric, Unit: 'Count' }] },
        ],
      },
      service,
      ...(reason === undefined ? {} : { reason }),
      [metric]: 1,
    }),
  );
}

/** The domain of an address, for log lines. */
export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1).toLowerCase();
}
