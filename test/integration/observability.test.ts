import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { describe, it, vi } from 'vitest';
import { MessageCounters, metricsInLine } from '../../infra/local/metrics-summary.ts';
import {
  latencyMetric,
  messageMetric,
  metricUnits,
} from '../../shared/platform/observability/metric-names.ts';
import { addMessage, sendingDomain, waitForStatus } from '../support/delivery.ts';
import { hostInfo, useHostEnvironment } from '../support/host.ts';
import { waitForSuppression } from '../support/suppressions.ts';

useHostEnvironment();

interface EmfDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: Array<{ Name: string; Unit: string }>;
}
type Line = Record<string, any>;

/** The service's log lines written since `offset`, parsed (every line must be JSON). */
function linesSince(offset: number): Line[] {
  const text = readFileSync(hostInfo().logFile).subarray(offset).toString('utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Line;
      } catch {
        return assert.fail(`not a JSON log line: ${line.slice(0, 200)}`);
      }
    });
}

const emfLines = (lines: Line[]) => lines.filter((line) => line._aws !== undefined);
const directivesOf = (line: Line) => line._aws.CloudWatchMetrics as EmfDirective[];
const hasMetric = (line: Line, name: string) =>
  directivesOf(line).some((d) => d.Metrics.some((m) => m.Name === name));

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  return vi.waitFor(
    () => {
      const found = probe();
      if (found === undefined) throw new Error(`timed out waiting for ${what}`);
      return found;
    },
    { timeout: timeoutMs, interval: 250 },
  );
}

describe('logs and metrics a real request and a real delivery print (LOG_FILE of the local host)', () => {
  it('writes the request line, state-change lines and EMF metrics with the right names and units, and no body or token', async () => {
    const offset = statSync(hostInfo().logFile).size;
    const sender = await sendingDomain('ed25519-sha256');
    const secret = `body-${randomUUID()}`;
    const added = await addMessage(sender.token, {
      message_sender: `app@${sender.domain}`,
      to: ['Ada <ada@recipient.test>', 'Bounce <bounce@recipient.test>'],
      subject: 'Observability',
      content: { kind: 'text_only', text: `Hello ${secret}` },
    });
    const final = await waitForStatus(sender.token, added.uuid, ['delivered', 'bounced', 'failed']);
    assert.equal(final.status, 'bounced', 'one recipient delivered, one bounced');
    // The hard bounce put the address on the account's suppression list: the next message to it
    // alone is suppressed.
    await waitForSuppression({ token: sender.token }, 'bounce@recipient.test');
    const again = await addMessage(sender.token, {
      message_sender: `app@${sender.domain}`,
      to: ['Bounce <bounce@recipient.test>'],
      subject: 'Observability, again',
      content: { kind: 'text_only', text: `Hello again ${secret}` },
    });
    const suppressed = await waitForStatus(sender.token, again.uuid, [
      'delivered',
      'bounced',
      'failed',
      'suppressed',
    ]);
    assert.equal(suppressed.status, 'suppressed');

    const lines = await until('the sender’s metric lines', () => {
      const all = linesSince(offset);
      const emf = emfLines(all);
      return [messageMetric.bounced, messageMetric.suppressed].every((name) =>
        emf.some((line) => hasMetric(line, name)),
      )
        ? all
        : undefined;
    });

    // Every EMF line of the service (this test's and concurrent tests') uses the catalogue's names and units.
    const emf = emfLines(lines);
    assert.ok(emf.length >= 3);
    for (const line of emf) {
      assert.equal(typeof line._aws.Timestamp, 'number');
      for (const directive of directivesOf(line)) {
        assert.equal(directive.Namespace, 'SvcMail');
        for (const dimensions of directive.Dimensions) {
          assert.ok(dimensions.includes('service'));
          assert.ok(!dimensions.includes('account'), 'no per-account dimension');
          for (const name of dimensions) assert.equal(typeof line[name], 'string', `dimension ${name}`);
        }
        for (const metric of directive.Metrics) {
          assert.equal(metric.Unit, metricUnits[metric.Name], `unit of ${metric.Name}`);
          const value = line[metric.Name];
          assert.ok(
            typeof value === 'number' || (Array.isArray(value) && value.every(Number.isFinite)),
            metric.Name,
          );
        }
      }
    }
    // The request: accepted, with its latency by route.
    assert.ok(emf.some((line) => hasMetric(line, messageMetric.accepted)));
    const latency = emf.find(
      (line) => hasMetric(line, latencyMetric) && line.route === 'POST /message/add-1.0',
    );
    assert.ok(latency, 'latency of the add request');
    assert.deepEqual(directivesOf(latency)[0]?.Dimensions, [['service', 'route']]);
    // The delivery: sent, delivered (the sink is the final hop) and bounced.
    for (const name of [messageMetric.sent, messageMetric.bounced, messageMetric.suppressed]) {
      assert.ok(
        emf.some((line) => hasMetric(line, name)),
        name,
      );
    }
    // The local host's summary reads the same lines.
    const counters = new MessageCounters();
    for (const line of emf) counters.add(JSON.stringify(line));
    assert.match(
      counters.take(),
      /^accepted [1-9]\d* · sent [1-9]\d* · delivered \d+ · bounced [1-9]\d* · suppressed [1-9]\d* · failed \d+$/,
    );
    assert.equal(metricsInLine('{"level":"INFO","message":"request"}').size, 0);

    // The request line (Powertools Logger): request id, route, account, result code, latency.
    const request = lines.find(
      (line) =>
        line.message === 'request' &&
        line.route === 'POST /message/add-1.0' &&
        line.account === sender.account,
    );
    assert.ok(request, 'request line');
    assert.equal(request.level, 'INFO');
    assert.equal(request.status, 200);
    assert.equal(typeof request.requestId, 'string');
    assert.equal(typeof request.latencyMs, 'number');
    assert.equal(typeof request.timestamp, 'string');
    assert.equal(typeof request.service, 'string');
    // State changes of this message, ending in its final status.
    const states = lines.filter((line) => line.message_uuid === added.uuid).map((line) => line.status);
    assert.ok(states.includes('processing'), states.join(','));
    assert.ok(states.includes('bounced'), states.join(','));

    const text = readFileSync(hostInfo().logFile).subarray(offset).toString('utf8');
    assert.ok(!text.includes(secret), 'a message body reached the log');
    assert.ok(!text.includes(sender.token), 'a token reached the log');
    assert.ok(!text.includes(sender.token.split('.')[2] as string), 'a token signature reached the log');
  });
});
