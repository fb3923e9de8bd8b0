import { serverTimeZone } from '../config/time.ts';

/*
 * Time zones come from the ICU database built into Node (Intl), the same data date libraries such
 * as Luxon wrap; using it directly keeps the public functions' bundles small (docs/decisions/0013-dates-and-time-zones.md).
 */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
      timeZoneName: 'longOffset',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/**
 * Throws at start when SERVER_TZ is not an IANA zone. UTC needs no formatter: creating the first
 * zoned Intl.DateTimeFormat loads ICU's time-zone data, a noticeable part of a small function's
 * cold start, and `toISOString` already is the UTC form.
 */
if (serverTimeZone !== 'UTC') formatterFor(serverTimeZone);

/**
 * Every date the service returns: ISO 8601 with a numeric offset in the server time zone,
 * e.g. `2026-11-22T09:15:00.000+01:00`; UTC is written `+00:00`, never `Z`.
 */
export function formatDate(value: Date | string | number, zone: string = serverTimeZone): string {
  const instant = value instanceof Date ? value : new Date(value);
  if (zone === 'UTC') return instant.toISOString().replace('Z', '+00:00');
  const parts: Record<string, string> = {};
  for (const part of formatterFor(zone).formatToParts(instant)) parts[part.type] = part.value;
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? 'GMT+00:00').slice(3);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${parts.fractionalSecond}${offset}`;
}

const isoWithOffset =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/**
 * True when the text is ISO 8601 with an offset AND names a real calendar instant: month 1–12, a
 * day that the month has (2026-02-30 is not a date, whatever `Date.parse` makes of it), hours
 * 0–23, minutes and seconds 0–59, offset at most ±23:59.
 */
export function isCalendarDateWithOffset(text: string): boolean {
  const match = isoWithOffset.exec(text);
  if (match === null) return false;
  const [, year, month, day, hour, minute, second = '0', offsetHours = '0', offsetMinutes = '0'] = match.map(
    (part) => part ?? undefined,
  ) as string[];
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  const lastDay = new Date(0);
  lastDay.setUTCFullYear(y, m, 0); // day 0 of the next month: the last day of month m
  const daysInMonth = lastDay.getUTCDate();
  return (
    m >= 1 &&
    m <= 12 &&
    d >= 1 &&
    d <= daysInMonth &&
    Number(hour) <= 23 &&
    Number(minute) <= 59 &&
    Number(second) <= 59 &&
    Number(offsetHours) <= 23 &&
    Number(offsetMinutes) <= 59
  );
}

/** Parses an incoming ISO 8601 timestamp; undefined unless it carries an explicit offset (or `Z`) and is a real date. */
export function parseDateWithOffset(text: string): Date | undefined {
  if (!isCalendarDateWithOffset(text)) return undefined;
  const time = Date.parse(text);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** The wall-clock date and hour of an instant in a zone, and the zone's offset then (minutes). */
export interface ZonedHour {
  /** `YYYY-MM-DD` in the zone. */
  date: string;
  /** 0–23 in the zone. */
  hour: number;
  offsetMinutes: number;
}

export function zonedHour(value: Date | number, zone: string = serverTimeZone): ZonedHour {
  const instant = value instanceof Date ? value : new Date(value);
  if (zone === 'UTC') {
    const iso = instant.toISOString();
    return { date: iso.slice(0, 10), hour: instant.getUTCHours(), offsetMinutes: 0 };
  }
  const parts: Record<string, string> = {};
  for (const part of formatterFor(zone).formatToParts(instant)) parts[part.type] = part.value;
  const offset = (parts.timeZoneName ?? 'GMT').slice(3);
  const [, sign = '+', hours = '0', minutes = '0'] = offset.match(/^([+-])(\d{2}):(\d{2})$/) ?? [];
  const offsetMinutes = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
  return { date: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour), offsetMinutes };
}

/**
 * The first instant at which the zone's clock shows `date` at `hour`:00. An hour that the change
 * back from summer time repeats: its first pass; an hour that the change to summer time skips: the
 * instant after the jump.
 */
export function startOfZonedHour(date: string, hour: number, zone: string = serverTimeZone): Date {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const wall = Date.UTC(year, month - 1, day, hour);
  // UTC has one offset and no transitions: the wall clock is the instant.
  if (zone === 'UTC') return new Date(wall);
  // The zone's offsets a day either side cover any transition near this hour.
  const offsets = new Set(
    [-86_400_000, 0, 86_400_000].map((shift) => zonedHour(wall + shift, zone).offsetMinutes),
  );
  const candidates = [...offsets].map((offset) => wall - offset * 60_000).sort((a, b) => a - b);
  const shows = candidates.filter((candidate) => {
    const shown = zonedHour(candidate, zone);
    return shown.date === date && shown.hour === hour;
  });
  return new Date(shows[0] ?? (candidates.at(-1) as number));
}
