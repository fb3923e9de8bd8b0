import type { AccessNeeds } from '../../shared/platform/access.ts';
import { routeDetails } from '../../shared/routes.ts';
import { type FunctionId, type WorkerId, workers } from '../../shared/workers.ts';

/**
 * What each function may touch, by function id: derived from the declarations (`access` in each
 * wing's route details and workers; the vocabulary is in shared/platform/access.ts).
 */
export const functionAccess = {
  ...Object.fromEntries(Object.entries(routeDetails).map(([id, details]) => [id, details.access])),
  ...Object.fromEntries(workers.map((worker) => [worker.id, worker.access])),
} as Record<FunctionId, AccessNeeds>;

/** What a user loses when a worker stops working (for alarm descriptions). */
export const workerImpact = Object.fromEntries(workers.map((worker) => [worker.id, worker.impact])) as Record<
  WorkerId,
  string
>;
