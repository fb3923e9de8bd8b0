import { onLogLine } from '../../shared/platform/observability/log.ts';
import { type CountedStatus, messageMetric } from '../../shared/platform/observability/metric-names.ts';

/**
 * `npm start` prints one line a minute with what the pipeline did: the local host reads the
 * embedded-metric-format lines the handlers write in this process (the same lines CloudWatch turns
 * into metrics on AWS) and adds up the message counters.
 */
const shown: readonly CountedStatus[] = ['accepted', 'sent', 'delivered', 'bounced', 'suppressed', 'failed'];

/** The metric values in one log line, if it is an embedded-metric-format line. */
export function metricsInLine(line: string): Map<string, number> {
  const values = new Map<string, number>();
  if (!line.includes('"_aws"')) return values;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return values;
  }
  const aws = parsed._aws as { CloudWatchMetrics?: Array<{ Metrics?: Array<{ Name: string }> }> } | undefined;
  for (const directive of aws?.CloudWatchMetrics ?? []) {
    for (const { Name } of directive.Metrics ?? []) {
      const raw = parsed[Name];
      const list = Array.isArray(raw) ? raw : [raw];
      const sum = list.reduce((total: number, value) => total + (typeof value === 'number' ? value : 0), 0);
      values.set(Name, (values.get(Name) ?? 0) + sum);
    }
  }
  return values;
}

export class MessageCounters {
  readonly #counts = new Map<string, number>();

  add(line: string): void {
    for (const [name, value] of metricsInLine(line))
      this.#counts.set(name, (this.#counts.get(name) ?? 0) + value);
  }

  /** `accepted 3 · sent 3 · delivered 3 · bounced 0 · suppressed 0 · failed 0`, then starts over. */
  take(): string {
    const text = shown
      .map((status) => `${status} ${this.#counts.get(messageMetric[status]) ?? 0}`)
      .join(' · ');
    this.#counts.clear();
    return text;
  }
}

export function startMetricsSummary(print: (line: string) => void, everyMs = 60_000): () => void {
  const counters = new MessageCounters();
  const stopListening = onLogLine((line) => counters.add(line));
  const timer = setInterval(() => print(`last minute: ${counters.take()}`), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    stopListening();
  };
}
