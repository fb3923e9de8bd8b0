import { serverTimeZone } from '../../config/time.ts';
import { startOfZonedHour, zonedHour } from '../../time/format.ts';
import { deriveEvents, type MessageSnapshot, type WebhookEventType } from '../webhooks/events.ts';

/**
 * Message statistics (docs/stats.md): what one committed change of a message adds to the counters,
 * where the counts are kept, and how stored counts become a series. Pure: the stream consumer and
 * the stats query do the reading and writing.
 *
 * Counters count recipients reaching a status, except `accepted`, which counts messages; `sent`
 * counts every recipient the relay or SES accepted, whatever happened next. They are the events the
 * webhook rules derive from the same change (`deriveEvents`), so the figures and the webhooks agree.
 */
export const statCounters = [
  'accepted',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'suppressed',
  'failed',
] as const;

export type StatCounter = (typeof statCounters)[number];

export type Counts = Record<StatCounter, number>;

/** A literal rather than built from `statCounters`: the stats query makes one per point. */
export const zeroCounts = (): Counts => ({
  accepted: 0,
  sent: 0,
  delivered: 0,
  bounced: 0,
  complained: 0,
  suppressed: 0,
  failed: 0,
});

const counterOfEvent: Partial<Record<WebhookEventType, StatCounter>> = {
  'message.sent': 'sent',
  'message.delivered': 'delivered',
  'message.bounced': 'bounced',
  'message.complained': 'complained',
  'message.suppressed': 'suppressed',
  'message.failed': 'failed',
};

/** One count and when it happened (UTC ISO). */
export interface CountedEvent {
  counter: StatCounter;
  at: string;
}

/** What a message is counted under besides `all`. */
export interface MessageLabels {
  /** The sending domain. */
  tenant: string;
  tags: ReadonlyArray<{ name: string; value: string }>;
  /** UTC ISO: when it was accepted. */
  createdAt: string;
}

/**
 * The counts one write of a message item adds: `accepted` when the item is created, and one count
 * per recipient event of the change. `before` is undefined for a new item.
 */
export function countedEvents(
  before: MessageSnapshot | undefined,
  after: MessageSnapshot,
  labels: Pick<MessageLabels, 'createdAt'>,
): CountedEvent[] {
  const counted: CountedEvent[] = before === undefined ? [{ counter: 'accepted', at: labels.createdAt }] : [];
  for (const event of deriveEvents(before, after)) {
    const counter = counterOfEvent[event.type];
    if (counter !== undefined) counted.push({ counter, at: event.at });
  }
  return counted;
}

// ---- Where counts are kept --------------------------------------------------------------------

/** What counts are kept under: the account as a whole (`all`), a sending domain, a tag. */
export type DimensionKind = 'all' | 'domain' | 'tag';

export interface Dimension {
  kind: DimensionKind;
  /** The sending domain, `<tag name>:<tag value>`, or '' for `all`. */
  value: string;
}

/** Every dimension a message counts under: all, its sending domain and each of its tags. */
export function dimensionsOf(labels: Pick<MessageLabels, 'tenant' | 'tags'>): Dimension[] {
  const tags = new Set(labels.tags.map((tag) => `${tag.name}:${tag.value}`));
  return [
    { kind: 'all', value: '' },
    { kind: 'domain', value: labels.tenant.toLowerCase() },
    ...[...tags].map((value) => ({ kind: 'tag' as const, value })),
  ];
}

/**
 * The bucket of a count: the date and hour of the server's time zone (SERVER_TZ) when it happened.
 * A day is the zone's calendar day; the hour the change back from summer time repeats is one bucket.
 */
export function bucketOf(at: string, zone?: string): { date: string; hour: number } {
  const { date, hour } = zonedHour(Date.parse(at), zone);
  return { date, hour };
}

/**
 * Counts are kept in two kinds of rows per dimension and stream shard: a day row, one attribute per
 * counter and hour (`d13`: delivered between 13:00 and 14:00), for hourly series; and a month row,
 * one attribute per counter and day (`dd15`: delivered on the 15th), for daily series. A 30-day
 * daily query then reads two month rows, an hourly one the rows of its days, whatever the volume.
 */
export type RowPeriod = 'day' | 'month';

export const counterLetter: Readonly<Record<StatCounter, string>> = {
  accepted: 'a',
  sent: 's',
  delivered: 'd',
  bounced: 'b',
  complained: 'c',
  suppressed: 'x',
  failed: 'f',
};

/** A day row's attribute: the counter's count in one hour (0–23). */
export const counterAttribute = (counter: StatCounter, hour: number): string =>
  `${counterLetter[counter]}${String(hour).padStart(2, '0')}`;

/** A month row's attribute: the counter's count on one day of the month (1–31). */
export const dayOfMonthAttribute = (counter: StatCounter, day: number): string =>
  `${counterLetter[counter]}d${String(day).padStart(2, '0')}`;

const counterOfLetter = new Map(Object.entries(counterLetter).map(([counter, letter]) => [letter, counter]));

/** The counter a day row's attribute counts (`d13` → delivered), or undefined for any other. */
export function counterOfAttribute(attribute: string): StatCounter | undefined {
  if (attribute.length !== 3) return undefined;
  const hour = Number(attribute.slice(1));
  if (!Number.isInteger(hour) || hour < 0 || hour > 23) return undefined;
  return counterOfLetter.get(attribute.charAt(0)) as StatCounter | undefined;
}

/**
 * Visits each count a stored row holds, as (counter, slot, n): the hour (0–23) of a day row's
 * `d13`, the day (1–31) of a month row's `dd15`. It walks the attributes the row has (a day or a
 * month with few counts has few), and skips the others (keys, `seq`, `expires_at`) and zeros.
 */
export function forEachCount(
  row: Record<string, unknown>,
  period: RowPeriod,
  visit: (counter: StatCounter, slot: number, n: number) => void,
): void {
  // `d13`: letter and two digits; `dd15`: letter, `d`, two digits.
  const digitsAt = period === 'day' ? 1 : 2;
  for (const name in row) {
    if (name.length !== digitsAt + 2 || (period === 'month' && name.charAt(1) !== 'd')) continue;
    const counter = counterOfLetter.get(name.charAt(0)) as StatCounter | undefined;
    const n = row[name];
    if (counter === undefined || typeof n !== 'number' || n === 0) continue;
    const tens = name.charCodeAt(digitsAt) - 48;
    const ones = name.charCodeAt(digitsAt + 1) - 48;
    if (tens < 0 || tens > 9 || ones < 0 || ones > 9) continue;
    const slot = tens * 10 + ones;
    if (period === 'day' ? slot > 23 : slot < 1 || slot > 31) continue;
    visit(counter, slot, n);
  }
}

/** Counts by slot (hours of a day row, days of a month row), slots without a count left out. */
function slotsOf(row: Record<string, unknown>, period: RowPeriod): Map<number, Counts> {
  const found = new Map<number, Counts>();
  forEachCount(row, period, (counter, slot, n) => {
    let counts = found.get(slot);
    if (counts === undefined) {
      counts = zeroCounts();
      found.set(slot, counts);
    }
    counts[counter] += n;
  });
  return new Map([...found].sort(([a], [b]) => a - b));
}

/** The hourly counts of a stored day row. */
export const hoursOfRow = (row: Record<string, unknown>): Map<number, Counts> => slotsOf(row, 'day');

/** The daily counts of a stored month row, by day of the month. */
export const daysOfRow = (row: Record<string, unknown>): Map<number, Counts> => slotsOf(row, 'month');

/**
 * Stream sequence numbers are decimal strings of up to 40 digits (beyond a Number's precision):
 * padded to 40, they compare as text in the order of the stream, in code and in a DynamoDB condition.
 */
export const sequenceKey = (sequenceNumber: string): string => sequenceNumber.padStart(40, '0');

// ---- Series -----------------------------------------------------------------------------------

export type Granularity = 'hour' | 'day';

/** The buckets from the one holding `from` to the one holding `to`, each with its start instant. */
export function bucketsBetween(
  from: Date,
  to: Date,
  granularity: Granularity,
  zone?: string,
): Array<{ date: string; hour?: number; start: Date }> {
  const first = zonedHour(from, zone);
  const buckets: Array<{ date: string; hour?: number; start: Date }> = [];
  if (granularity === 'day') {
    const last = zonedHour(to, zone).date;
    // Calendar dates step by 24 hours of UTC (the calendar itself has no zone); each day starts
    // when the zone's clock shows its midnight, which in UTC is that very instant.
    const utc = (zone ?? serverTimeZone) === 'UTC';
    for (let midnight = Date.parse(`${first.date}T00:00:00Z`); ; midnight += 86_400_000) {
      const date = new Date(midnight).toISOString().slice(0, 10);
      if (date > last) return buckets;
      buckets.push({ date, start: utc ? new Date(midnight) : startOfZonedHour(date, 0, zone) });
    }
  }
  // Hours step in real time: an hour the change back from summer time repeats shows a label
  // already seen (one bucket), an hour the change to summer time skips never shows.
  const seen = new Set<string>();
  for (let cursor = startOfZonedHour(first.date, first.hour, zone).getTime(); cursor <= to.getTime(); ) {
    const { date, hour } = zonedHour(cursor, zone);
    if (!seen.has(`${date} ${hour}`)) {
      seen.add(`${date} ${hour}`);
      buckets.push({ date, hour, start: new Date(cursor) });
    }
    cursor += 3_600_000;
  }
  return buckets;
}

/** Rates of a set of counts, as fractions: bounced ÷ sent and complained ÷ delivered (0 without any). */
export function ratesOf(counts: Counts): { bounce_rate: number; complaint_rate: number } {
  return {
    bounce_rate: counts.sent === 0 ? 0 : counts.bounced / counts.sent,
    complaint_rate: counts.delivered === 0 ? 0 : counts.complained / counts.delivered,
  };
}

export const addCounts = (into: Counts, more: Counts): Counts => {
  for (const counter of statCounters) into[counter] += more[counter];
  return into;
};
