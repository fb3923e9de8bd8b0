import * as z from 'zod/mini';
import { incomingDate, serverDate } from '../platform/schemas/dates.ts';
import { describe } from '../platform/schemas/describe.ts';
import type { statCounters } from './model/counters.ts';

/**
 * Request and response schemas of POST /stats/query-1.0 (docs/stats.md), the single source for
 * validation, types and the OpenAPI document. The request is strict: an unknown field is 107.
 */
export const maxHourlyBuckets = 31 * 24;
export const maxDailyBuckets = 400;

export const statsQueryRequest = describe(
  z.strictObject({
    date_from: incomingDate('date_from', 'Start of the range: ISO 8601 with an offset'),
    date_to: incomingDate('date_to', 'End of the range (inclusive): ISO 8601 with an offset'),
    granularity: describe(
      z.enum(['hour', 'day'], { error: 'granularity must be hour or day' }),
      `One point per hour (at most ${maxHourlyBuckets}) or per day (at most ${maxDailyBuckets}) of the server time zone`,
    ),
    group_by: z.optional(
      describe(
        z.enum(['domain', 'tag', 'stream'], { error: 'group_by must be domain, tag or stream' }),
        'One series per sending domain, per tag (`name:value`) or per stream (`transactional`, `broadcast`); absent: one series, key `all`',
      ),
    ),
  }),
  'The range, the granularity and an optional grouping',
);

export type StatsQueryRequest = z.infer<typeof statsQueryRequest>;

const count = (what: string) => describe(z.number(), what);

const counts = {
  accepted: count('Messages accepted'),
  sent: count('Recipients the relay or SES accepted'),
  delivered: count('Recipients delivered'),
  bounced: count('Recipients that bounced'),
  complained: count('Recipients that complained'),
  suppressed: count('Recipients skipped: on the suppression list'),
  failed: count('Recipients that failed'),
  unsubscribed: count('Recipients that used the one-click unsubscribe of a broadcast'),
  opened: count(
    'Recipients who opened a tracked message, once each (machine opens included; docs/tracking.md)',
  ),
  clicked: count('Recipients who clicked a tracked link, once each'),
  human_opened: count(
    "Recipients with an open that was not a machine's (Apple Mail Privacy Protection, image proxies, prefetch), once each",
  ),
} satisfies Record<(typeof statCounters)[number], unknown>;

export const statsQueryResponse = z.object({
  series: z.array(
    z.object({
      key: describe(z.string(), '`all`, the sending domain, the tag as `name:value`, or the stream'),
      points: z.array(
        z.object({
          at: describe(serverDate('Start of the hour or day'), 'Start of the hour or day'),
          ...counts,
        }),
      ),
    }),
  ),
  totals: describe(
    z.object({
      ...counts,
      bounce_rate: describe(z.number(), 'bounced ÷ sent, a fraction (0 when nothing was sent)'),
      complaint_rate: describe(
        z.number(),
        'complained ÷ delivered, a fraction (0 when nothing was delivered)',
      ),
    }),
    "The account's totals over the range, whatever the grouping",
  ),
});
