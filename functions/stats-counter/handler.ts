import { observedWorker } from '#shared/platform/observability/powertools.ts';
import { type CountingEvent, type CountingResponse, countStreamBatch } from '#shared/stats/stream-counter.ts';

/**
 * The table stream's counting consumer (event source mapping with a tumbling window, so each event
 * names its stream shard; locally the host's stream poller does the same): message changes → the
 * counter rows of the statistics.
 */
export const handler = observedWorker(
  async (event: CountingEvent): Promise<CountingResponse> => countStreamBatch(event),
);
