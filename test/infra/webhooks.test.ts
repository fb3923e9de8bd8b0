import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import {
  queueDefinition,
  tableDefinition,
  tableStreamDefinition,
  webhookQueueDefinition,
} from '../../infra/resources/definitions.ts';
import { webhookFailureThreshold } from '../../infra/stack/alarms.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

/** The webhook pipeline's resources (docs/webhooks.md): stream, fan-out, queue, DLQ, delivery, alarms. */
const { template } = synthService();
const only = (type: string, pattern: RegExp): [string, Record<string, any>] => {
  const entries = Object.entries(resourcesOfType(template, type)).filter(([id]) => pattern.test(id));
  assert.equal(entries.length, 1, `${type} ${pattern}`);
  return entries[0] as [string, Record<string, any>];
};
const [tableId, table] = only('AWS::DynamoDB::Table', /^StorageTable/);
const [webhookQueueId, webhookQueue] = only('AWS::SQS::Queue', /^StorageWebhookQueue/);
const [webhookDlqId, webhookDlq] = only('AWS::SQS::Queue', /^StorageWebhookDeadLetterQueue/);
const [failureQueueId] = only('AWS::SQS::Queue', /^StorageStreamFailureQueue/);
const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'));
const mappingOf = (functionId: string) => {
  const found = mappings.filter(
    (mapping) =>
      JSON.stringify(mapping.Properties.FunctionName) ===
      JSON.stringify({ Ref: functionLogicalId(template, functionId) }),
  );
  assert.equal(found.length, 1, functionId);
  return found[0] as Record<string, any>;
};

describe('webhook pipeline', () => {
  it('the table streams new and old images (the outbox)', () => {
    assert.equal(tableDefinition.streamViewType, 'NEW_AND_OLD_IMAGES');
    assert.deepEqual(table.Properties.StreamSpecification, { StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('webhook-fanout reads the stream: bisect, batch item failures, retries, an on-failure queue', () => {
    const mapping = mappingOf('webhook-fanout');
    assert.deepEqual(mapping.Properties.EventSourceArn, { 'Fn::GetAtt': [tableId, 'StreamArn'] });
    assert.equal(mapping.Properties.StartingPosition, 'TRIM_HORIZON');
    assert.equal(mapping.Properties.BisectBatchOnFunctionError, true);
    assert.deepEqual(mapping.Properties.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.equal(mapping.Properties.MaximumRetryAttempts, tableStreamDefinition.retryAttempts);
    assert.equal(
      mapping.Properties.MaximumRecordAgeInSeconds,
      tableStreamDefinition.maxRecordAgeHours * 3600,
    );
    assert.deepEqual(mapping.Properties.DestinationConfig.OnFailure.Destination, {
      'Fn::GetAtt': [failureQueueId, 'Arn'],
    });
  });

  it('webhook-delivery consumes the webhook queue with batch item failures; the queue redrives to its DLQ', () => {
    const mapping = mappingOf('webhook-delivery');
    assert.deepEqual(mapping.Properties.EventSourceArn, { 'Fn::GetAtt': [webhookQueueId, 'Arn'] });
    assert.deepEqual(mapping.Properties.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.equal(mapping.Properties.BatchSize, webhookQueueDefinition.batchSize);
    assert.deepEqual(webhookQueue.Properties.RedrivePolicy, {
      deadLetterTargetArn: { 'Fn::GetAtt': [webhookDlqId, 'Arn'] },
      maxReceiveCount: webhookQueueDefinition.maxReceiveCount,
    });
    assert.equal(webhookQueue.Properties.SqsManagedSseEnabled, true);
    assert.equal(webhookDlq.Properties.SqsManagedSseEnabled, true);
    const [, deliveryFn] = only('AWS::Lambda::Function', /^WorkerwebhookdeliveryFunction/);
    // Lambda's rule: visibility ≥ 6 × the consumer's timeout.
    assert.ok(webhookQueue.Properties.VisibilityTimeout >= 6 * deliveryFn.Properties.Timeout);
    assert.equal(deliveryFn.Properties.Timeout, webhookQueueDefinition.deliveryTimeoutSeconds);
  });

  it('caps webhook work: the delivery mapping runs at most webhookConcurrency invocations, the sender at most 5', () => {
    assert.deepEqual(mappingOf('webhook-delivery').Properties.ScalingConfig, { MaximumConcurrency: 10 });
    assert.deepEqual(mappingOf('sender').Properties.ScalingConfig, {
      MaximumConcurrency: queueDefinition.maxConcurrency,
    });
    const { template: wider } = synthService({ context: { webhookConcurrency: '25' } });
    const widerMappings = Object.values(resourcesOfType(wider, 'AWS::Lambda::EventSourceMapping'));
    const delivery = widerMappings.find(
      (mapping) =>
        JSON.stringify(mapping.Properties.FunctionName) ===
        JSON.stringify({ Ref: functionLogicalId(wider, 'webhook-delivery') }),
    );
    assert.deepEqual(delivery?.Properties.ScalingConfig, { MaximumConcurrency: 25 });
    assert.throws(
      () => synthService({ context: { webhookConcurrency: '1' } }),
      /webhookConcurrency must be an integer >= 2/,
    );
  });

  it('no webhook function is told to allow private targets', () => {
    for (const id of ['webhook-add', 'webhook-delivery']) {
      const [, fn] = only(
        'AWS::Lambda::Function',
        new RegExp(`^(Route|Worker)${id.replaceAll('-', '')}Function`),
      );
      assert.ok(!('WEBHOOK_ALLOW_PRIVATE_TARGETS' in (fn.Properties.Environment?.Variables ?? {})), id);
    }
  });

  it('alarms on the webhook DLQ, the stream failure queue, fan-out errors and delivery failures', () => {
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    const on = (queueId: string) =>
      alarms.filter((alarm) => JSON.stringify(alarm.Properties.Dimensions ?? []).includes(queueId));
    assert.match(on(webhookDlqId)[0]?.Properties.AlarmDescription, /replay/);
    assert.match(on(failureQueueId)[0]?.Properties.AlarmDescription, /no receiver gets them/);
    // On the service's own metric (shared/platform/observability/metric-names.ts): namespace SvcMail, by service.
    const failures = alarms.filter((alarm) =>
      JSON.stringify(alarm.Properties.Metrics ?? []).includes('"WebhookDeliveryFailures"'),
    );
    assert.equal(failures.length, 1);
    assert.equal(failures[0]?.Properties.Metrics[0].MetricStat.Metric.Namespace, 'SvcMail');
    assert.equal(failures[0]?.Properties.Metrics[0].MetricStat.Period, 900);
    assert.equal(failures[0]?.Properties.Threshold, webhookFailureThreshold);
    assert.equal(
      alarms.filter((alarm) => /webhook fan-out keeps failing/.test(alarm.Properties.AlarmDescription))
        .length,
      1,
    );
  });
});
