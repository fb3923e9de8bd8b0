import { dataResponse } from '#shared/platform/http/envelope.ts';
import { protectedHandler } from '#shared/platform/http/protected-handler.ts';
import { log } from '#shared/platform/observability/log.ts';
import { queryStats } from '#shared/stats/query.ts';
import { statsQuery } from '#shared/stats/routes.ts';
import { type StatsQueryRequest, statsQueryRequest } from '#shared/stats/schemas.ts';

/** POST /stats/query-1.0: hourly or daily counts of the caller's messages, with totals and rates. */
export const handler = protectedHandler<StatsQueryRequest>(
  statsQuery,
  { input: { schema: statsQueryRequest, from: 'body' } },
  async ({ input, caller, requestId }) => {
    const { rowsRead, ...answer } = await queryStats(caller.account, input);
    log('debug', 'stats query', { requestId, rowsRead, series: answer.series.length });
    return dataResponse(answer);
  },
);
