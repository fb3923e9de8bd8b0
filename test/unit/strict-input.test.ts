import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import type { $ZodIssue } from 'zod/v4/core';
import { clipDetail, detailView, maxDetailLength } from '../../shared/messages/model/message.ts';
import { validationError, withoutIgnoredFields } from '../../shared/platform/middleware/validate-input.ts';
import { isCalendarDateWithOffset, parseDateWithOffset } from '../../shared/platform/time/format.ts';
import { routeDetails } from '../../shared/routes.ts';

describe('strict input on every route', () => {
  // Guards routes added later too: a request schema must refuse fields it does not know.
  for (const [routeId, entry] of Object.entries(routeDetails)) {
    if (entry.request === undefined) continue;
    it(`${routeId}: an unknown field is refused (107), named in a detail`, () => {
      const example = Object.values(entry.examples?.request ?? {})[0]?.value ?? {};
      const result = entry.request['~standard'].validate({
        ...(example as object),
        surely_unknown_field: 1,
      }) as { issues?: $ZodIssue[] };
      assert.ok(result.issues !== undefined, `${routeId} accepted an unknown field`);
      const error = validationError(result.issues);
      assert.equal(error.code, 107);
      assert.ok(
        error.details?.some((detail) => detail.field === 'surely_unknown_field'),
        JSON.stringify(error.details),
      );
    });
  }

  it('removes tenant_id (and only it) before validation', () => {
    assert.deepEqual(withoutIgnoredFields({ tenant_id: 'x', a: 1 }), { a: 1 });
    const body = { a: 1 };
    assert.equal(withoutIgnoredFields(body), body);
    assert.deepEqual(withoutIgnoredFields([1]), [1]);
  });
});

describe('calendar dates', () => {
  it('accepts real instants and refuses impossible ones', () => {
    for (const good of [
      '2026-02-28T10:00:00+00:00',
      '2028-02-29T10:00:00Z',
      '2026-12-31T23:59:59.999-05:30',
      '2026-01-01T00:00+14:00',
    ])
      assert.ok(isCalendarDateWithOffset(good), good);
    for (const bad of [
      '2026-02-30T10:00:00+00:00',
      '2026-02-29T10:00:00+00:00',
      '2026-04-31T10:00:00+00:00',
      '2026-13-01T10:00:00+00:00',
      '2026-00-10T10:00:00+00:00',
      '2026-03-01T24:00:00+00:00',
      '2026-03-01T10:60:00+00:00',
      '2026-03-01T10:00:60+00:00',
      '2026-03-01T10:00:00+24:00',
      '2026-03-01T10:00:00',
    ]) {
      assert.equal(isCalendarDateWithOffset(bad), false, bad);
      assert.equal(parseDateWithOffset(bad), undefined, bad);
    }
  });
});

describe('date filters of every page query', () => {
  for (const routeId of ['message-query', 'suppression-query'] as const) {
    it(`${routeId}: an impossible calendar date is refused (107), a real one accepted`, () => {
      const validate = (date_from: string) =>
        routeDetails[routeId].request?.['~standard'].validate({ filters: { date_from } }) as {
          issues?: $ZodIssue[];
        };
      const refused = validate('2026-02-30T10:00:00+00:00').issues;
      assert.ok(refused !== undefined, `${routeId} accepted 2026-02-30`);
      assert.match(
        validationError(refused).message + JSON.stringify(validationError(refused).details),
        /2026-02-30 does not exist/,
      );
      assert.equal(validate('2026-02-28T10:00:00+00:00').issues, undefined);
    });
  }
});

describe('details', () => {
  it('shows UTC timestamps inside a detail with the server offset', () => {
    assert.equal(
      detailView('released by the scheduler for 2026-11-22T08:15:00.000Z'),
      'released by the scheduler for 2026-11-22T08:15:00.000+00:00',
    );
    assert.equal(detailView('250 2.0.0 OK'), '250 2.0.0 OK');
  });

  it('clips a detail to its bound', () => {
    const clipped = clipDetail('x'.repeat(10_000));
    assert.equal(clipped.length, maxDetailLength);
    assert.ok(clipped.endsWith('…'));
    assert.equal(clipDetail('short'), 'short');
  });
});
