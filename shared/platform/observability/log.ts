import { appendFileSync } from 'node:fs';
import { defaultNamespace, latencyMetric } from './metric-names.ts';

/**
 * The service's one logging and latency API: `log(level, message, fields)` and `recordLatency`.
 * Call sites never change; what sits underneath does:
 * - functions built with Powertools (every authenticated API function and every worker) install the
 *   Powertools Logger and Metrics behind it (`shared/platform/observability/powertools.ts`);
 * - the lean public functions (health, GET keepalive, the OpenAPI document) keep this file's own
 *   writers: one JSON object per line, and the latency as one embedded-metric-format line, because
 *   Powertools Logger and Metrics would more than double their bundles (budget 20 KB:
 *   docs/decisions/0010-bundle-budget.md).
 * Never pass message bodies, attachments, tokens or keys in `fields`.
 */
export type Level = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface TelemetryBackend {
  log(level: Level, message: string, fields: LogFields): void;
  /** Handler latency of one request, by route (`GET /health`). */
  latency(route: string, milliseconds: number): void;
}

const order: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };
const threshold = order[(process.env.LOG_LEVEL?.toLowerCase() as Level) ?? 'info'] ?? order.info;

/** The CloudWatch namespace and `service` dimension every metric is published under. */
export const metricsNamespace = (): string => process.env.POWERTOOLS_METRICS_NAMESPACE || defaultNamespace;
export const serviceName = (): string => process.env.POWERTOOLS_SERVICE_NAME || 'svc-mail';

/**
 * Where a line goes: stdout on Lambda; locally `LOG_FILE` if set (the test runner does this, so
 * tests can read the lines), and every line is also handed to the local host's listeners (the
 * per-minute summary of `npm start` reads the metric lines).
 */
type LineListener = (line: string) => void;
const listeners = new Set<LineListener>();
export function onLogLine(listener: LineListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
export function writeLine(line: string): void {
  const logFile = process.env.LOG_FILE;
  if (logFile) appendFileSync(logFile, line);
  else process.stdout.write(line);
  for (const listener of listeners) listener(line);
}

const leanBackend: TelemetryBackend = {
  log(level, message, fields) {
    if (order[level] < threshold) return;
    // The same keys as Powertools Logger's lines, so one query reads both.
    const line = {
      level: level.toUpperCase(),
      message,
      timestamp: new Date().toISOString(),
      service: serviceName(),
    };
    writeLine(`${JSON.stringify({ ...line, ...fields })}\n`);
  },
  latency(route, milliseconds) {
    // The embedded metric format, as Powertools Metrics writes it for a single metric.
    const emf = {
      _aws: {
        Timestamp: Date.now(),
        CloudWatchMetrics: [
          {
            Namespace: metricsNamespace(),
            Dimensions: [['service', 'route']],
            Metrics: [{ Name: latencyMetric, Unit: 'Milliseconds' }],
          },
        ],
      },
      service: serviceName(),
      route,
      [latencyMetric]: milliseconds,
    };
    writeLine(`${JSON.stringify(emf)}\n`);
  },
};

let backend: TelemetryBackend = leanBackend;

/** Installs the Powertools backend (see powertools.ts); lean functions never call this. */
export function useTelemetryBackend(next: TelemetryBackend): void {
  backend = next;
}

export function log(level: Level, message: string, fields: LogFields = {}): void {
  backend.log(level, message, fields);
}

export function recordLatency(route: string, milliseconds: number): void {
  backend.latency(route, milliseconds);
}

/** A short, safe description of an unexpected error: its class and message, never its stack. */
export function describeError(error: unknown): Record<string, string> {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message.slice(0, 300) };
  return { errorName: typeof error };
}
