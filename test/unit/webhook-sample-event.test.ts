import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { webhookEventTypes } from '../../shared/webhooks/model/events.ts';
import { sampleEventBody, sampleMessageUuid } from '../../shared/webhooks/model/sample-event.ts';
import { webhookEventProblems } from '../support/contract.ts';

describe('test event bodies (POST /webhook/test-1.0)', () => {
  it('every event type gets a body that matches WebhookEvent in docs/openapi.json', () => {
    for (const type of webhookEventTypes) {
      const body = sampleEventBody(
        type,
        'wh_5f0c6a1e2b3d4c5e6f708192',
        'https://hooks.example.com/a',
        '2026-11-28T09:00:00.000+00:00',
      );
      assert.deepEqual(webhookEventProblems(body), [], type);
      const parsed = JSON.parse(body);
      assert.equal(parsed.type, type);
      if (type.startsWith('message.')) {
        assert.equal(parsed.data.message_uuid, sampleMessageUuid, 'about no real message');
        assert.deepEqual(parsed.data.metadata, { test: 'true' });
      }
    }
  });
});
