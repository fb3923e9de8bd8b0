import {
  deriveChanges,
  type MessageEventType,
  type MessageLabels,
  type MessageSnapshot,
} from '../../messages/index.ts';
import { serverTimeZone } from '../../platform/config/time.ts';
import { startOfZonedHour, zonedHour } from '../../platform/time/format.ts';

/**
 * Message statistics (docs/stats.md): what one committed change of a message adds to the counters,
 * where the counts are kept, and how stored counts become a series. Pure: the stream consumer and
 * the stats query do the reading and writing.
 *
 * Counters count recipients reaching a status, except `accepted`, which counts messages; `sent`
 * counts every recipient the relay or SES accepted, whatever happened next. They are the events the
 * webhooks report of the same change (`deriveChanges`, shared/messages/model/changes.ts), so the figures and the webhooks agree.
 */
export const statCounters = [
  'accepted',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'suppressed',
  'failed',
  'unsubscribed',
  'opened',
  'clicked',
  'human_opened',
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
  unsubscribed: 0,
  opened: 0,
  clicked: 0,
  human_opened: 0,
});

const counterOfEvent: Partial<Record<MessageEventType, StatCounter>> = {
  'message.sent': 'sent',
  'message.delivered': 'delivered',
  'message.bounced': 'bounced',
  'message.complained': 'complained',
  'message.suppressed': 'suppressed',
  'message.failed': 'failed',
  'recipient.unsubscribed': 'unsubscribed',
};

/** One count and when it happened (UTC ISO). */
export interface CountedEvent {
  counter: StatCounter;
  at: string;
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
  for (const event of deriveChanges(before, after)) {
    const counter = counterOfEvent[event.type];
    if (counter !== undefined) counted.push({ counter, at: event.at });
  }
  return counted;
}

// ---- Where counts are kept --------------------------------------------------------------------

/** What counts are kept under: the account as a whole (`all`), a sending domain, a tag. */
export type DimensionKind = 'all' | 'domain' | 'tag' | 'stream';

export interface Dimension {
  kind: DimensionKind;
  /** The sending domain, `<tag name>:<tag value>`, or '' for `all`. */
  value: string;
}

/** Every dimension a message counts under: all, its sending domain, its stream and each of its tags. */
export function dimensionsOf(labels: Pick<MessageLabels, 'tenant' | 'tags' | 'stream'>): Dimension[] {
  const tags = new Set(labels.tags.map((tag) => `${tag.name}:${tag.value}`));
  return [
    { kind: 'all', value: '' },
    { kind: 'domain', value: labels.tenant.toLowerCase() },
    { kind: 'stream', value: labels.stream },
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
 * counter and hour (`d13`: delivered between 13:00 and 14:00), for hourly series; and a week row,
 * Monday to Sunday, one attribute per counter and day of the week (`d3`: delivered on the
 * Wednesday), for daily series. A 30-day daily query then reads five or six week rows, an hourly
 * one the rows of its days, whatever the volume. Weeks rather than months: the rows of a range hold
 * little outside it (two month rows hold about 60 days for a 30-day query), and reading a row costs
 * by the counts it holds.
 */
export type RowPeriod = 'day' | 'week';

export const counterLetter: Readonly<Record<StatCounter, string>> = {
  accepted: 'a',
  sent: 's',
  delivered: 'd',
  bounced: 'b',
  complained: 'c',
  suppressed: 'x',
  failed: 'f',
  unsubscribed: 'u',
  opened: 'o',
  clicked: 'k',
  human_opened: 'h',
};

/** A day row's attribute: the counter's count in one hour (0–23). */
export const counterAttribute = (counter: StatCounter, hour: number): string =>
  `${counterLetter[counter]}${String(hour).padStart(2, '0')}`;

/** A week row's attribute: the counter's count on one day of the week (1 = Monday … 7 = Sunday). */
export const dayOfWeekAttribute = (counter: StatCounter, weekday: number): string =>
  `${counterLetter[counter]}${weekday}`;

const dayMs = 86_400_000;

/**
 * The week row a calendar date (`YYYY-MM-DD`) counts in: the date of its Monday, which names the
 * row, and its day of that week (1 = Monday … 7 = Sunday).
 */
export function weekOf(date: string): { monday: string; weekday: number } {
  // getUTCDay counts from Sunday (0).
  const weekday = ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
  return { monday: dateAfter(date, 1 - weekday), weekday };
}

/** The calendar date (`YYYY-MM-DD`) `days` after another. */
export const dateAfter = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * dayMs).toISOString().slice(0, 10);

/** Whole days from one calendar date (`YYYY-MM-DD`) to another. */
export const daysFrom = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / dayMs);

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
 * `d13`, the day of the week (1–7) of a week row's `d3`. It walks the attributes the row has (a
 * day or a week with few counts has few), and skips the others (keys, `seq`, `expires_at`) and
 * zeros.
 */
export function forEachCount(
  row: Record<string, unknown>,
  period: RowPeriod,
  visit: (counter: StatCounter, slot: number, n: number) => void,
): void {
  // `d13`: a letter and two digits; `d3`: a letter and one digit.
  const length = period === 'day' ? 3 : 2;
  const [lowest, highest] = period === 'day' ? [0, 23] : [1, 7];
  for (const name in row) {
    if (name.length !== length) continue;
    const counter = counterOfLetter.get(name.charAt(0)) as StatCounter | undefined;
    const n = row[name];
    if (counter === undefined || typeof n !== 'number' || n === 0) continue;
    let slot = 0;
    for (let index = 1; index < length && slot >= 0; index++) {
      const digit = name.charCodeAt(index) - 48;
      slot = digit < 0 || digit > 9 ? -1 : slot * 10 + digit;
    }
    if (slot < lowest || slot > highest) continue;
    visit(counter, slot, n);
  }
}

/** Counts by slot (hours of a day row, days of a week row), slots without a count left out. */
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

/** The daily counts of a stored week row, by day of the week (1 = Monday). */
export const daysOfWeekRow = (row: Record<string, unknown>): Map<number, Counts> => slotsOf(row, 'week');

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
    for (let midnight = Date.parse(`${first.date}T00:00:00Z`); ; midnight += dayMs) {
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
