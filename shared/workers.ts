import { deliveryWorkers } from './delivery/workers.ts';
import { domainsWorkers } from './domains/workers.ts';
import { inboundWorkers } from './inbound/workers.ts';
import type { Worker } from './platform/worker.ts';
import { type RouteId, routeDetails } from './routes.ts';
import { statsWorkers } from './stats/workers.ts';
import { webhooksWorkers } from './webhooks/workers.ts';

/**
 * The worker table: every wing's functions that no HTTP route invokes (declared in its workers.ts),
 * for the CDK stack (event sources, schedules, IAM, alarms) and the local host (event-source loops
 * and timers).
 */
export const workers = [
  ...deliveryWorkers,
  ...webhooksWorkers,
  ...statsWorkers,
  ...inboundWorkers,
  ...domainsWorkers,
] as const satisfies readonly Worker[];

export type WorkerId = (typeof workers)[number]['id'];

/** Every function: a route's or a worker's. */
export type FunctionId = RouteId | WorkerId;

/** Routes also invoked on a schedule (EventBridge invokes them directly; locally a timer). */
export const scheduledRoutes = Object.entries(routeDetails).flatMap(([routeId, details]) =>
  details.schedule === undefined
    ? []
    : [{ routeId: routeId as RouteId, everyMinutes: details.schedule.everyMinutes }],
);
