import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { lambdaContext } from '../../infra/local/lambda-context.ts';

// On Lambda (AWS_LAMBDA_FUNCTION_NAME set) a worker's lines carry the Lambda context and its counters
// are flushed as one EMF line on stdout. Module state is per test file; the variables are restored.
describe('Powertools on Lambda', () => {
  const saved = { ...process.env };
  const written: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  beforeAll(() => {
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'sender-unit';
    process.env.POWERTOOLS_SERVICE_NAME = 'UnitStack';
    delete process.env.LOG_FILE;
  });
  afterAll(() => {
    process.stdout.write = write;
    for (const name of ['AWS_LAMBDA_FUNCTION_NAME', 'POWERTOOLS_SERVICE_NAME', 'LOG_FILE']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('injects the Lambda context into the log lines and publishes the counters when the invocation ends', async () => {
    const { observedWorker, observabilityMiddlewares } = await import(
      '../../shared/platform/observability/powertools.ts'
    );
    const { log } = await import('../../shared/platform/observability/log.ts');
    const { countMessages, countWebhookDelivery } = await import(
      '../../shared/platform/observability/metrics.ts'
    );
    assert.equal(observabilityMiddlewares().length, 2);
    const handler = observedWorker(async () => {
      log('info', 'message state change', { message_uuid: 'u-1', status: 'sent' });
      countMessages('sent');
      countMessages('delivered', 2);
      countWebhookDelivery(true);
      countWebhookDelivery(false, true);
      return 'done';
    });
    process.stdout.write = ((chunk: string | Uint8Array) => {
      written.push(chunk.toString());
      return true;
    }) as typeof process.stdout.write;
    let result: string;
    try {
      result = await handler({}, lambdaContext('sender-unit', 'request-1'));
    } finally {
      process.stdout.write = write;
    }
    assert.equal(result, 'done');
    const lines = written
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, any>);
    const state = lines.find((line) => line.message === 'message state change');
    assert.equal(state?.function_name, 'sender-unit');
    assert.equal(state?.function_request_id, 'request-1');
    assert.equal(state?.level, 'INFO');
    assert.equal(state?.service, 'UnitStack');
    const emf = lines.filter((line) => line._aws !== undefined);
    assert.equal(emf.length, 1, 'one EMF line per invocation');
    assert.equal(emf[0]?.MessagesSent, 1);
    assert.equal(emf[0]?.MessagesDelivered, 2);
    assert.deepEqual(emf[0]?.WebhookDeliveries, [1, 1]);
    assert.equal(emf[0]?.WebhookDeliveryFailures, 1);
    assert.equal(emf[0]?.WebhookDeadLettered, 1);
    assert.deepEqual(emf[0]?._aws.CloudWatchMetrics[0].Dimensions, [['service']]);
    assert.equal(emf[0]?.service, 'UnitStack');
  });
});
