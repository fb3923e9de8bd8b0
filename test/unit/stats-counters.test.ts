import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import type { MessageSnapshot } from '../../shared/messages/model/changes.ts';
import { formatDate } from '../../shared/platform/time/format.ts';
import {
  bucketOf,
  bucketsBetween,
  countedEvents,
  counterAttribute,
  dateAfter,
  dayOfWeekAttribute,
  daysOfWeekRow,
  dimensionsOf,
  hoursOfRow,
  ratesOf,
  sequenceKey,
  weekOf,
  zeroCounts,
} from '../../shared/stats/model/counters.ts';

const at = '2026-11-20T10:40:00.000Z';
const snapshot = (
  status: string,
  recipients: MessageSnapshot['recipients'],
  history: MessageSnapshot['history'],
) => ({
  messageUuid: 'm1',
  accountId: 'acct',
  status,
  subject: 's',
  recipients,
  history,
  tags: [],
  metadata: {},
});

describe('what a change of a message counts', () => {
  test('accepted once, when the item is created; then one count per recipient event', () => {
    const created = snapshot(
      'queued',
      [
        { email: 'a@x.test', status: 'pending' },
        { email: 'b@x.test', status: 'pending' },
      ],
      [{ status: 'queued', at }],
    );
    assert.deepEqual(countedEvents(undefined, created, { createdAt: at }), [{ counter: 'accepted', at }]);
    const later = '2026-11-20T10:41:00.000Z';
    const settled = snapshot(
      'bounced',
      [
        { email: 'a@x.test', status: 'delivered', updatedAt: later },
        { email: 'b@x.test', status: 'bounced', updatedAt: later },
      ],
      [
        { status: 'queued', at },
        { status: 'sent', at: later },
        { status: 'delivered', at: later, recipient: 'a@x.test' },
        { status: 'bounced', at: later, recipient: 'b@x.test' },
        { status: 'bounced', at: later },
      ],
    );
    // b was refused in the relay's answer: bounced, never sent.
    assert.deepEqual(
      countedEvents(created, settled, { createdAt: at })
        .map((event) => event.counter)
        .sort(),
      ['bounced', 'delivered', 'sent'],
    );
    // The same change seen again (a redelivered record) counts the same, not more: the rows'
    // high-water marks keep it from being added twice.
    assert.deepEqual(countedEvents(settled, settled, { createdAt: at }), []);
  });

  test('every message counts under all, its sending domain, its stream and each distinct tag', () => {
    assert.deepEqual(
      dimensionsOf({
        tenant: 'Shop.Example',
        stream: 'broadcast',
        tags: [
          { name: 'kind', value: 'receipt' },
          { name: 'kind', value: 'receipt' },
          { name: 'plan', value: 'pro' },
        ],
      }),
      [
        { kind: 'all', value: '' },
        { kind: 'domain', value: 'shop.example' },
        { kind: 'stream', value: 'broadcast' },
        { kind: 'tag', value: 'kind:receipt' },
        { kind: 'tag', value: 'plan:pro' },
      ],
    );
  });
});

describe('buckets of the server time zone', () => {
  test('a count goes to the hour and day of the zone', () => {
    assert.deepEqual(bucketOf('2026-11-20T20:10:00.000Z', 'Asia/Kolkata'), { date: '2026-11-21', hour: 1 });
    assert.deepEqual(bucketOf('2026-11-20T20:10:00.000Z', 'UTC'), { date: '2026-11-20', hour: 20 });
  });

  test('hours in a half-hour zone start at :30 UTC; days at its midnight', () => {
    const hours = bucketsBetween(
      new Date('2026-11-20T00:00:00Z'),
      new Date('2026-11-20T02:00:00Z'),
      'hour',
      'Asia/Kolkata',
    );
    assert.deepEqual(
      hours.map((bucket) => formatDate(bucket.start, 'Asia/Kolkata')),
      ['2026-11-20T05:00:00.000+05:30', '2026-11-20T06:00:00.000+05:30', '2026-11-20T07:00:00.000+05:30'],
    );
    const days = bucketsBetween(
      new Date('2026-11-20T00:00:00Z'),
      new Date('2026-11-22T00:00:00Z'),
      'day',
      'Asia/Kolkata',
    );
    assert.deepEqual(
      days.map((bucket) => bucket.start.toISOString()),
      ['2026-11-19T18:30:00.000Z', '2026-11-20T18:30:00.000Z', '2026-11-21T18:30:00.000Z'],
    );
  });

  test('the day summer time ends has 24 hour buckets (the repeated hour is one); the day it starts, 23', () => {
    const autumn = bucketsBetween(
      new Date('2026-10-24T22:00:00Z'),
      new Date('2026-10-25T22:59:00Z'),
      'hour',
      'Europe/Berlin',
    );
    assert.equal(autumn.length, 24);
    assert.equal(formatDate(autumn[2]?.start as Date, 'Europe/Berlin'), '2026-10-25T02:00:00.000+02:00');
    const spring = bucketsBetween(
      new Date('2026-03-28T23:00:00Z'),
      new Date('2026-03-29T21:59:00Z'),
      'hour',
      'Europe/Berlin',
    );
    assert.equal(spring.length, 23);
    assert.ok(!spring.some((bucket) => bucket.hour === 2));
  });
});

describe('counter rows and rates', () => {
  test('a day row holds one attribute per counter and hour, a week row one per counter and day', () => {
    assert.equal(counterAttribute('delivered', 7), 'd07');
    const hours = hoursOfRow({ d07: 3, s07: 4, b23: 1, seq: '1', expires_at: 5 });
    assert.deepEqual(hours.get(7), { ...zeroCounts(), delivered: 3, sent: 4 });
    assert.deepEqual(hours.get(23), { ...zeroCounts(), bounced: 1 });
    assert.equal(hours.size, 2);
    assert.equal(dayOfWeekAttribute('delivered', 5), 'd5');
    // An hour's attribute, a day out of the week, the keys and `seq` are not days of the week.
    const days = daysOfWeekRow({ d5: 3, a7: 2, x1: 4, d05: 99, s0: 9, s8: 9, sk: 'w#all', seq: '1' });
    assert.deepEqual([...days.keys()], [1, 5, 7]);
    assert.deepEqual(days.get(5), { ...zeroCounts(), delivered: 3 });
    assert.deepEqual(days.get(7), { ...zeroCounts(), accepted: 2 });
    assert.deepEqual(days.get(1), { ...zeroCounts(), suppressed: 4 });
  });

  test('a date counts in the week row of its Monday, on its day of that week', () => {
    assert.deepEqual(weekOf('2026-03-04'), { monday: '2026-03-02', weekday: 3 });
    assert.deepEqual(weekOf('2026-03-02'), { monday: '2026-03-02', weekday: 1 });
    assert.deepEqual(weekOf('2026-03-08'), { monday: '2026-03-02', weekday: 7 });
    // Across a month's and a year's end, and a leap day.
    assert.deepEqual(weekOf('2027-01-01'), { monday: '2026-12-28', weekday: 5 });
    assert.deepEqual(weekOf('2028-03-01'), { monday: '2028-02-28', weekday: 3 });
    assert.deepEqual(weekOf('1970-01-01'), { monday: '1969-12-29', weekday: 4 });
    assert.deepEqual(weekOf('1969-12-28'), { monday: '1969-12-22', weekday: 7 });
    for (let offset = -800; offset < 800; offset++) {
      const date = dateAfter('2026-01-01', offset * 37);
      const { monday, weekday } = weekOf(date);
      assert.ok(weekday >= 1 && weekday <= 7, `${date}: day ${weekday} of the week`);
      assert.equal(new Date(`${monday}T00:00:00Z`).getUTCDay(), 1);
      assert.equal(dateAfter(monday, weekday - 1), date);
    }
  });

  test('sequence numbers of any length compare in stream order once padded', () => {
    assert.ok(sequenceKey('900000000000000000001') < sequenceKey('1000000000000000000000'));
  });

  test('bounce rate is bounced ÷ sent, complaint rate complained ÷ delivered, 0 without any', () => {
    assert.deepEqual(ratesOf({ ...zeroCounts(), sent: 200, bounced: 5, delivered: 190, complained: 1 }), {
      bounce_rate: 0.025,
      complaint_rate: 1 / 190,
    });
    assert.deepEqual(ratesOf(zeroCounts()), { bounce_rate: 0, complaint_rate: 0 });
  });
});
