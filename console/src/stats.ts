import type { StatsPoint, StatsSeries } from './types.ts';

/**
 * The Dashboard's arithmetic, apart from the page: the ranges it offers, the rates of each point
 * (as the statistics route defines them) and the levels at which SES acts on an account's rates
 * (docs/deliverability.md), drawn as guard lines.
 */
export const dashboardRanges = {
  '24h': { label: 'Last 24 hours, hourly', hours: 24, granularity: 'hour' },
  '7d': { label: 'Last 7 days, daily', hours: 7 * 24, granularity: 'day' },
  '30d': { label: 'Last 30 days, daily', hours: 30 * 24, granularity: 'day' },
} as const;
export type DashboardRange = keyof typeof dashboardRanges;

export const dashboardGroups = {
  all: 'The account',
  domain: 'Sending domain',
  tag: 'Tag',
  stream: 'Stream',
} as const;
export type DashboardGroup = keyof typeof dashboardGroups;

/** SES places an account under review, then may pause its sending, at these rates. */
export const guardLevels = {
  bounce: { review: 0.05, pause: 0.1 },
  complaint: { review: 0.001, pause: 0.005 },
} as const;

/** bounced ÷ sent and complained ÷ delivered, 0 when the divisor is 0 (as the route's totals). */
export function bounceRate(point: Pick<StatsPoint, 'bounced' | 'sent'>): number {
  return point.sent === 0 ? 0 : point.bounced / point.sent;
}

export function complaintRate(point: Pick<StatsPoint, 'complained' | 'delivered'>): number {
  return point.delivered === 0 ? 0 : point.complained / point.delivered;
}

export type Counter =
  | 'accepted'
  | 'sent'
  | 'delivered'
  | 'bounced'
  | 'complained'
  | 'suppressed'
  | 'failed'
  | 'unsubscribed'
  | 'opened'
  | 'human_opened'
  | 'clicked';
/** Opens and clicks count recipients of tracked messages once each (docs/tracking.md). */
export const counters: readonly Counter[] = [
  'accepted',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'suppressed',
  'failed',
  'unsubscribed',
  'opened',
  'human_opened',
  'clicked',
];

/** One series' counts added up over the range (the rows of the table beside the charts). */
export function seriesTotals(series: StatsSeries): Record<Counter, number> {
  const totals = Object.fromEntries(counters.map((counter) => [counter, 0])) as Record<Counter, number>;
  for (const point of series.points) for (const counter of counters) totals[counter] += point[counter];
  return totals;
}

/** A rate as a percentage for people: two significant decimals below 1 %. */
export function percent(rate: number): string {
  const value = rate * 100;
  return `${value === 0 ? '0' : value < 1 ? value.toFixed(2) : value.toFixed(1)} %`;
}

/** Where a rate stands against SES's levels. */
export function rateLevel(
  rate: number,
  levels: { review: number; pause: number },
): 'ok' | 'review' | 'pause' {
  return rate >= levels.pause ? 'pause' : rate >= levels.review ? 'review' : 'ok';
}
