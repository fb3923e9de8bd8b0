import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { type Level, metricsNamespace, serviceName, useTelemetryBackend, writeLine } from './log.ts';
import { latencyMetric } from './metric-names.ts';

/**
 * Powertools for AWS Lambda: the Logger and Metrics of every function except the lean public ones
 * (see log.ts). Importing this module installs them behind `log()` and `recordLatency()`, so no call
 * site changes. On Lambda both write to stdout (CloudWatch Logs; the metric lines are embedded
 * metric format, which CloudWatch turns into metrics). Locally every line goes through log.ts's
 * `writeLine`: to `LOG_FILE` when set (tests read it) and to the local host's listeners.
 */
const onLambda = process.env.AWS_LAMBDA_FUNCTION_NAME !== undefined;
const levels: Record<string, 'DEBUG' | 'INFO' | 'WARN' | 'ERROR'> = {
  debug: 'DEBUG',
  info: 'INFO',
  warn: 'WARN',
  error: 'ERROR',
};

export const logger = new Logger({
  serviceName: serviceName(),
  logLevel: levels[process.env.LOG_LEVEL?.toLowerCase() ?? 'info'] ?? 'INFO',
});

/**
 * Powertools Metrics warns through this logger; "nothing to publish" is the normal case for an
 * invocation that changes no message (a query, an empty dispatcher run), so it goes to debug.
 */
const metricsLogger = {
  trace: (...args: unknown[]) => logger.debug(String(args[0])),
  debug: (...args: unknown[]) => logger.debug(String(args[0])),
  info: (...args: unknown[]) => logger.info(String(args[0])),
  error: (...args: unknown[]) => logger.error(String(args[0])),
  warn: (...args: unknown[]) => {
    const text = String(args[0]);
    if (text.startsWith('No application metrics to publish')) logger.debug(text);
    else logger.warn(text);
  },
};

/** Counters of one invocation (messages, webhooks), published by `logMetrics` when it ends. */
export const metrics = new Metrics({
  namespace: metricsNamespace(),
  serviceName: serviceName(),
  logger: metricsLogger,
});

function useConsole(instance: Logger | Metrics, console: Console): void {
  (instance as unknown as { console: Console }).console = console;
}

// Locally, lines go through writeLine (LOG_FILE, the host's listeners) instead of stdout.
const localConsole = onLambda ? undefined : localLineConsole();
if (localConsole !== undefined) {
  useConsole(logger, localConsole);
  useConsole(metrics, localConsole);
}

function localLineConsole(): Console {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeLine(chunk.toString());
      done();
    },
  });
  return new Console({ stdout: stream, stderr: stream });
}

/**
 * Metrics with a dimension of their own (latency by route, counts by sending domain): their own
 * instance, published at once, so the dimension stays on them. Made on first use: only the API
 * functions record latency, only the statistics consumer counts by domain, and a Metrics instance
 * costs a worker's cold start its own console on stdout and stderr.
 */
let latencyMetrics: Metrics | undefined;
function latencyMetricsInstance(): Metrics {
  if (latencyMetrics === undefined) {
    latencyMetrics = new Metrics({
      namespace: metricsNamespace(),
      serviceName: serviceName(),
      logger: metricsLogger,
    });
    if (localConsole !== undefined) useConsole(latencyMetrics, localConsole);
  }
  return latencyMetrics;
}

useTelemetryBackend({
  log(level: Level, message: string, fields: Record<string, unknown>) {
    logger[level](message, fields);
  },
  latency(route: string, milliseconds: number) {
    const instance = latencyMetricsInstance();
    instance.addDimension('route', route);
    instance.addMetric(latencyMetric, MetricUnit.Milliseconds, milliseconds);
    instance.publishStoredMetrics();
  },
});

/** Counts under one more dimension (`domain`), published now as one line. */
export function publishWithDimension(
  dimension: string,
  value: string,
  counts: ReadonlyArray<readonly [name: string, count: number]>,
): void {
  if (counts.length === 0) return;
  const instance = latencyMetricsInstance();
  instance.addDimension(dimension, value);
  for (const [name, count] of counts) instance.addMetric(name, MetricUnit.Count, count);
  instance.publishStoredMetrics();
}

// biome-ignore lint/suspicious/noExplicitAny: Powertools' middlewares are typed for any event.
type AnyMiddleware = MiddlewareObj<any, any, Error, any>;

/**
 * First in every Powertools function's Middy chain: the Lambda context on each log line (function
 * name, request id, cold start), metrics flushed at the end. The local host runs every function in
 * one process, concurrently, with one Logger: there the context would label one function's lines
 * with another's name, so it is left out locally (the lines keep their own request id, route and
 * message uuid).
 */
export function observabilityMiddlewares(): AnyMiddleware[] {
  const flush = logMetrics(metrics) as AnyMiddleware;
  return onLambda ? [injectLambdaContext(logger) as AnyMiddleware, flush] : [flush];
}

/**
 * A worker's handler (queue, schedule, EventBridge) wrapped in the same two middlewares. The
 * context is optional for in-process callers (tests); Lambda always passes one.
 */
export function observedWorker<TEvent, TResult>(
  handler: (event: TEvent, context: Context) => Promise<TResult>,
): (event: TEvent, context?: Context) => Promise<TResult> {
  const chain = middy<TEvent, TResult, Error, Context>(handler);
  for (const middleware of observabilityMiddlewares()) chain.use(middleware);
  return (event, context) => chain(event, context ?? ({} as Context));
}
