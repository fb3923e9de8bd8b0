import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { deriveEndpointEvents, endpointEventBody } from '../../shared/webhooks/model/endpoint-events.ts';
import {
  afterFailure,
  decideJob,
  disableAfterMs,
  failuresBeforePause,
  healthNote,
  healthy,
  pauseAfter,
  stateOf,
} from '../../shared/webhooks/model/endpoint-health.ts';

const now = Date.parse('2026-11-24T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const plain = (text: string) => text;

describe('endpoint health', () => {
  it('pauses from the 5th failure in a row, longer each time, up to an hour', () => {
    assert.deepEqual(
      [1, 4, 5, 6, 7, 8, 9, 10, 50].map((failures) => pauseAfter(failures) / 1000),
      [0, 0, 60, 300, 900, 1800, 3600, 3600, 3600],
    );
    assert.equal(failuresBeforePause, 5);
  });

  it('a failure below the threshold counts, from the threshold it pauses, after 5 days it disables', () => {
    const since = iso(now - 60_000);
    assert.deepEqual(afterFailure({ consecutiveFailures: 3, failingSince: since }, now, plain), {});
    assert.deepEqual(afterFailure({ consecutiveFailures: 5, failingSince: since }, now, plain), {
      pausedUntil: iso(now + 60_000),
    });
    const old = iso(now - disableAfterMs);
    const outcome = afterFailure({ consecutiveFailures: 120, failingSince: old }, now, plain);
    assert.match(
      outcome.disable ?? '',
      /^Disabled after failing for 5 days without a successful delivery \(120 failed attempts in a row since 2026-11-19T12:00:00\.000Z\)$/,
    );
    assert.deepEqual(afterFailure({ consecutiveFailures: 5, failingSince: since }, now, plain, [2, 4]), {
      pausedUntil: iso(now + 2_000),
    });
  });

  it('jobs attempt while healthy, wait while paused, and make one trial once the pause is over', () => {
    assert.deepEqual(decideJob(healthy, now), { action: 'attempt', trial: false });
    const paused = { consecutiveFailures: 5, failingSince: iso(now - 10_000), pausedUntil: iso(now + 5_000) };
    assert.deepEqual(decideJob(paused, now), { action: 'wait', untilMs: now + 5_000 });
    assert.deepEqual(decideJob({ ...paused, pausedUntil: iso(now - 1) }, now), {
      action: 'attempt',
      trial: true,
    });
  });

  it('says what is going on in the endpoint’s note', () => {
    const endpoint = { enabled: true };
    assert.equal(stateOf(healthy, true, now), 'healthy');
    assert.equal(healthNote(healthy, endpoint, now, plain), null);
    const failing = { consecutiveFailures: 2, failingSince: iso(now - 60_000) };
    assert.equal(stateOf(failing, true, now), 'failing');
    assert.equal(
      healthNote(failing, endpoint, now, plain),
      '2 failed attempts in a row since 2026-11-24T11:59:00.000Z; after 5 in a row deliveries pause; without a successful delivery it is disabled at 2026-11-29T11:59:00.000Z',
    );
    const paused = { ...failing, consecutiveFailures: 6, pausedUntil: iso(now + 300_000) };
    assert.equal(stateOf(paused, true, now), 'paused');
    assert.match(
      healthNote(paused, endpoint, now, plain) ?? '',
      /^Deliveries are paused until 2026-11-24T12:05:00\.000Z after 6 failed attempts/,
    );
    assert.equal(stateOf(paused, false, now), 'disabled');
    assert.equal(
      healthNote(paused, { enabled: false, disabledReason: 'The receiver answered 410 Gone' }, now, plain),
      'The receiver answered 410 Gone',
    );
  });
});

describe('the webhook.disabled event', () => {
  const endpoint = { accountId: 'acc', webhookId: 'wh_1', url: 'https://hooks.example/a', enabled: true };

  it('comes from an endpoint that went from enabled to disabled, once, with a stable id', () => {
    const after = {
      ...endpoint,
      enabled: false,
      disabledAt: iso(now),
      disabledReason: 'The receiver answered 410 Gone',
    };
    const [event] = deriveEndpointEvents(endpoint, after);
    assert.ok(event);
    assert.equal(event.type, 'webhook.disabled');
    assert.deepEqual(deriveEndpointEvents(endpoint, after), [event], 'the same change, the same id');
    assert.deepEqual(JSON.parse(endpointEventBody(event, plain)), {
      type: 'webhook.disabled',
      timestamp: iso(now),
      data: { webhook_id: 'wh_1', url: 'https://hooks.example/a', reason: 'The receiver answered 410 Gone' },
    });
    assert.deepEqual(deriveEndpointEvents(after, after), [], 'already disabled');
    assert.deepEqual(deriveEndpointEvents(undefined, after), [], 'created disabled: nothing to tell');
    assert.deepEqual(deriveEndpointEvents(endpoint, endpoint), [], 'still enabled');
  });
});
