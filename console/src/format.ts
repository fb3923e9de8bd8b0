/** Dates as the API gives them (ISO 8601 with the server's offset), shown without the noise. */
export function displayDate(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(iso);
  return match === null ? iso : `${match[1]} ${match[2]} ${match[3] === 'Z' ? '+00:00' : match[3]}`;
}

const pad = (value: number) => String(value).padStart(2, '0');

/** A `datetime-local` input's value (the browser's time zone) as ISO 8601 with its offset. */
export function fromLocalInput(value: string): string | undefined {
  if (value === '') return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(
    date.getMinutes(),
  )}:${pad(date.getSeconds())}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}

/** The other way: an ISO date as a `datetime-local` value in the browser's time zone. */
export function toLocalInput(iso: string | undefined): string {
  if (iso === undefined || iso === '') return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * An instant (seconds) in the browser's time zone as the charts show it, in the ISO style of the
 * rest of the console: `2026-11-28 09:00` in a legend, and on an axis the day at midnight
 * (`2026-11-28`) and the time otherwise (`09:00`, short enough not to overlap), never a locale's
 * month/day order.
 */
export function chartInstant(seconds: number): string {
  const date = new Date(seconds * 1000);
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function chartTick(seconds: number): string {
  const [day, time] = chartInstant(seconds).split(' ') as [string, string];
  return time === '00:00' ? day : time;
}
