import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { scheduledRoutes, workers } from '../../shared/workers.ts';
import { loadFunction } from './function-code.ts';
import type { LocalWorker } from './workers.ts';

type ScheduledHandler = (event: unknown, context: Context) => Promise<unknown>;

/** Every function that runs on a schedule on AWS: the scheduled routes and the scheduled workers. */
export const schedules: ReadonlyArray<{ functionId: string; everyMinutes: number }> = [
  ...scheduledRoutes.map(({ routeId, everyMinutes }) => ({ functionId: routeId, everyMinutes })),
  ...workers.flatMap((worker) =>
    worker.trigger === 'schedule' ? [{ functionId: worker.id, everyMinutes: worker.everyMinutes }] : [],
  ),
];

/**
 * The local interval of a scheduled function: `<FIRST WORD>_INTERVAL_SECONDS` wins
 * (KEEPALIVE_INTERVAL_SECONDS, DISPATCHER_INTERVAL_SECONDS).
 */
export function intervalSeconds(routeId: string, everyMinutes: number): number {
  const name = `${routeId.split('-')[0]?.toUpperCase()}_INTERVAL_SECONDS`;
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return everyMinutes * 60;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

/** The event an EventBridge rule with a rate schedule delivers. */
export function scheduledEvent(routeId: string): Record<string, unknown> {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: process.env.AWS_REGION ?? 'us-east-1',
    resources: [`arn:aws:events:local:000000000000:rule/${routeId}-schedule`],
    detail: {},
  };
}

/**
 * Stands in for EventBridge in front of every scheduled function (`schedules`: the keepalive route
 * and the dispatcher): every interval it invokes the function's handler module directly with a
 * scheduled event, as EventBridge invokes the Lambda, with no token. Like a rate schedule, the first run comes
 * one interval after start; runs of one route never overlap; a failed run is logged, not fatal.
 */
export function schedulesWorker(): LocalWorker {
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  const schedule = (routeId: string, everySeconds: number): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      const run = invoke(routeId).finally(() => {
        running.delete(run);
        if (!stopped) schedule(routeId, everySeconds);
      });
      running.add(run);
    }, everySeconds * 1000);
    timer.unref();
    timers.add(timer);
  };

  return {
    name: 'schedules (EventBridge stand-in)',
    start: async () => {
      for (const { functionId, everyMinutes } of schedules) {
        schedule(functionId, intervalSeconds(functionId, everyMinutes));
      }
    },
    stop: async () => {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...running]);
    },
  };
}

async function invoke(routeId: string): Promise<void> {
  const requestId = randomUUID();
  try {
    // Loaded on first use, like the gateway loads handlers: importing them at start would fix the
    // logger's destination before the host's caller has configured it.
    const { lambdaContext } = await import('./lambda-context.ts');
    const { asFunction } = await import('./invocations.ts');
    const handler = await loadFunction<ScheduledHandler>(routeId);
    await asFunction(routeId, () =>
      handler(scheduledEvent(routeId), lambdaContext(routeId, requestId, 60_000)),
    );
  } catch (error) {
    process.stderr.write(
      `scheduled ${routeId} failed (${requestId}): ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
