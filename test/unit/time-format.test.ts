import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { formatDate, parseDateWithOffset } from '../../shared/platform/time/format.ts';

describe('formatDate', () => {
  it('writes UTC as +00:00, never Z, with milliseconds', () => {
    assert.equal(formatDate(new Date('2026-11-22T09:15:00Z'), 'UTC'), '2026-11-22T09:15:00.000+00:00');
    assert.equal(
      formatDate('2026-11-22T00:00:00.007Z', 'UTC'),
      '2026-11-22T00:00:00.007+00:00',
      'midnight is 00, not 24',
    );
  });

  it('follows daylight saving time in both directions (Europe/Berlin)', () => {
    const zone = 'Europe/Berlin';
    assert.equal(formatDate('2026-03-29T00:59:59Z', zone), '2026-03-29T01:59:59.000+01:00');
    assert.equal(formatDate('2026-03-29T01:00:00Z', zone), '2026-03-29T03:00:00.000+02:00');
    // The repeated hour in October: the same wall time, told apart by the offset.
    assert.equal(formatDate('2026-10-25T00:30:00Z', zone), '2026-10-25T02:30:00.000+02:00');
    assert.equal(formatDate('2026-10-25T01:30:00Z', zone), '2026-10-25T02:30:00.000+01:00');
  });

  it('handles negative, half-hour and quarter-hour offsets and date changes', () => {
    assert.equal(formatDate('2026-03-08T06:59:00Z', 'America/New_York'), '2026-03-08T01:59:00.000-05:00');
    assert.equal(formatDate('2026-03-08T07:00:00Z', 'America/New_York'), '2026-03-08T03:00:00.000-04:00');
    assert.equal(formatDate('2026-11-22T09:15:00Z', 'Asia/Kolkata'), '2026-11-22T14:45:00.000+05:30');
    assert.equal(formatDate('2026-11-22T09:15:00Z', 'Asia/Kathmandu'), '2026-11-22T15:00:00.000+05:45');
    assert.equal(formatDate('2026-11-22T09:15:00Z', 'America/St_Johns'), '2026-11-22T05:45:00.000-03:30');
    assert.equal(formatDate('2026-12-31T23:30:00Z', 'Asia/Tokyo'), '2027-01-01T08:30:00.000+09:00');
    assert.equal(formatDate('2026-11-22T09:15:00Z', 'Australia/Lord_Howe'), '2026-11-22T20:15:00.000+11:00');
  });

  it('round-trips: the written string parses back to the same instant in every zone', () => {
    const instant = new Date('2026-07-01T12:34:56.789Z');
    for (const zone of ['UTC', 'Europe/Berlin', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Chatham']) {
      const text = formatDate(instant, zone);
      assert.match(text, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}$/, zone);
      assert.equal(parseDateWithOffset(text)?.getTime(), instant.getTime(), zone);
    }
  });

  it('refuses a zone that is not an IANA name', () => {
    assert.throws(() => formatDate(new Date(), 'Mars/Olympus_Mons'), RangeError);
  });
});

describe('parseDateWithOffset', () => {
  it('accepts ISO 8601 with an offset or Z', () => {
    assert.equal(parseDateWithOffset('2026-11-22T09:15:00+01:00')?.toISOString(), '2026-11-22T08:15:00.000Z');
    assert.equal(parseDateWithOffset('2026-11-22T09:15Z')?.toISOString(), '2026-11-22T09:15:00.000Z');
    assert.equal(
      parseDateWithOffset('2026-11-22T09:15:00.5-03:30')?.toISOString(),
      '2026-11-22T12:45:00.500Z',
    );
  });

  it('refuses dates without an offset and impossible dates', () => {
    for (const text of [
      '2026-11-22T09:15:00',
      '2026-11-22',
      'tomorrow',
      '2026-13-01T00:00:00Z',
      '2026-11-22 09:15:00+01:00',
    ]) {
      assert.equal(parseDateWithOffset(text), undefined, text);
    }
  });
});
