import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it, vi } from 'vitest';
import { startMetricsSummary } from '../../infra/local/metrics-summary.ts';
import { recordLatency, writeLine } from '../../shared/platform/observability/log.ts';

// `npm start`'s one line a minute, driven by the lines the handlers write (here: written directly).
describe('local metrics summary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'summary-'));
  const previous = process.env.LOG_FILE;
  beforeAll(() => {
    process.env.LOG_FILE = join(dir, 'service.log');
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.LOG_FILE;
    else process.env.LOG_FILE = previous;
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds up the message counters of the EMF lines and starts over each interval', async () => {
    const printed: string[] = [];
    const stop = startMetricsSummary((line) => printed.push(line), 100);
    try {
      const emf = (values: Record<string, number | number[]>) =>
        `${JSON.stringify({
          _aws: {
            Timestamp: Date.now(),
            CloudWatchMetrics: [
              {
                Namespace: 'SvcMail',
                Dimensions: [['service']],
                Metrics: Object.keys(values).map((Name) => ({ Name, Unit: 'Count' })),
              },
            ],
          },
          service: 'svc-mail',
          ...values,
        })}\n`;
      writeLine(emf({ MessagesAccepted: 2, MessagesSent: [1, 1] }));
      writeLine(emf({ MessagesDelivered: 1, MessagesBounced: 1, MessagesFailed: 1 }));
      writeLine('{"level":"INFO","message":"request"}\n');
      recordLatency('GET /health', 3);
      const line = await vi.waitFor(
        () => {
          const found = printed.find((entry) => entry.includes('accepted 2'));
          assert.ok(found, `the interval's line: ${printed.join(' | ')}`);
          return found;
        },
        { timeout: 10_000, interval: 20 },
      );
      assert.equal(
        line,
        'last minute: accepted 2 · sent 2 · delivered 1 · bounced 1 · suppressed 0 · failed 1',
      );
      const after = printed.length;
      await vi.waitFor(() => assert.ok(printed.length > after, 'the next interval’s line'), {
        timeout: 10_000,
        interval: 20,
      });
      assert.equal(
        printed.at(-1),
        'last minute: accepted 0 · sent 0 · delivered 0 · bounced 0 · suppressed 0 · failed 0',
      );
    } finally {
      stop();
    }
  });
});
