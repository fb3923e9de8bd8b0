import { type RouteDetailsOf, route } from '../platform/http/route.ts';
import { statsQueryRequest, statsQueryResponse } from './schemas.ts';

export const statsQuery = route('stats-query', 'POST /stats/query-1.0', ['messages:read']);

/** The routes of this wing: the route table (shared/routes.ts) lists them. */
export const statsRoutes = [statsQuery] as const;

/**
 * What the OpenAPI document, the stack (descriptions, alarms, IAM) and the local host derive of each
 * route: its summary, schemas, own errors, examples and what its function may touch. No function
 * imports it, so it stays out of every bundle.
 */
export const statsRouteDetails = {
  'stats-query': {
    summary: 'Hourly or daily counts of your messages by status, with bounce and complaint rates',
    tag: 'stats',
    // Reads counter rows (statistics), never a message; settles the rows stream shards no longer
    // write (updates and deletes limited to counter rows' keys).
    access: { table: 'settle-counters' },
    request: statsQueryRequest,
    requestIn: 'body',
    response: statsQueryResponse,
    examples: {
      request: {
        daily: {
          summary: 'Three days, by sending domain',
          value: {
            date_from: '2026-11-20T00:00:00+01:00',
            date_to: '2026-11-22T23:59:59+01:00',
            granularity: 'day',
            group_by: 'domain',
          },
        },
      },
      response: {
        daily: {
          summary: 'One domain, three days',
          value: {
            series: [
              {
                key: 'example.test',
                points: [
                  {
                    at: '2026-11-20T00:00:00.000+01:00',
                    accepted: 120,
                    sent: 130,
                    delivered: 127,
                    bounced: 2,
                    complained: 0,
                    suppressed: 1,
                    failed: 0,
                    unsubscribed: 0,
                    opened: 0,
                    clicked: 0,
                    human_opened: 0,
                  },
                  {
                    at: '2026-11-21T00:00:00.000+01:00',
                    accepted: 98,
                    sent: 101,
                    delivered: 100,
                    bounced: 1,
                    complained: 1,
                    suppressed: 0,
                    failed: 0,
                    unsubscribed: 0,
                    opened: 0,
                    clicked: 0,
                    human_opened: 0,
                  },
                  {
                    at: '2026-11-22T00:00:00.000+01:00',
                    accepted: 0,
                    sent: 0,
                    delivered: 0,
                    bounced: 0,
                    complained: 0,
                    suppressed: 0,
                    failed: 0,
                    unsubscribed: 0,
                    opened: 0,
                    clicked: 0,
                    human_opened: 0,
                  },
                ],
              },
            ],
            totals: {
              accepted: 218,
              sent: 231,
              delivered: 227,
              bounced: 3,
              complained: 1,
              suppressed: 1,
              failed: 0,
              unsubscribed: 0,
              opened: 0,
              clicked: 0,
              human_opened: 0,
              bounce_rate: 0.012987012987012988,
              complaint_rate: 0.004405286343612335,
            },
          },
        },
      },
    },
  },
} as const satisfies RouteDetailsOf<(typeof statsRoutes)[number]>;
