import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { tableDefinition } from '../../infra/resources/definitions.ts';
import { reputationThresholds } from '../../infra/stack/reputation.ts';
import { resourcesOfType, synthService } from '../support/infra.ts';

const { stack, template } = synthService();

const alarmFor = (metricName: string) => {
  const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm')).filter(
    (alarm) => alarm.Properties.MetricName === metricName,
  );
  assert.equal(alarms.length, 1, metricName);
  return alarms[0] as { Properties: Record<string, any> };
};

describe('SES reputation guardrails', () => {
  it('the configuration set publishes reputation metrics and suppresses bounces and complaints', () => {
    template.hasResourceProperties('AWS::SES::ConfigurationSet', {
      ReputationOptions: { ReputationMetricsEnabled: true },
      SuppressionOptions: { SuppressedReasons: ['BOUNCE', 'COMPLAINT'] },
    });
  });

  it('a custom resource turns on account-level suppression (bounce, complaint) with one allowed action', () => {
    const resources = Object.entries(resourcesOfType(template, 'Custom::SesAccountSuppression'));
    assert.equal(resources.length, 1);
    const [, resource] = resources[0] as [string, { Properties: Record<string, any> }];
    for (const phase of ['Create', 'Update']) {
      const call = JSON.parse(JSON.stringify(resource.Properties[phase]));
      const text = typeof call === 'string' ? call : JSON.stringify(call);
      assert.match(text, /PutAccountSuppressionAttributes/, phase);
      assert.match(text, /"SuppressedReasons\\?":\[\\?"BOUNCE\\?",\\?"COMPLAINT\\?"\]/, phase);
    }
    assert.equal(resource.Properties.Delete, undefined, 'deleting the stack leaves the account setting on');
    const policies = Object.entries(resourcesOfType(template, 'AWS::IAM::Policy')).filter(([id]) =>
      id.startsWith('ReputationAccountSuppressionCustomResourcePolicy'),
    );
    assert.equal(policies.length, 1);
    const statements = (policies[0] as [string, { Properties: Record<string, any> }])[1].Properties
      .PolicyDocument.Statement as Array<{ Action: string | string[]; Effect: string }>;
    const actions = statements.flatMap((statement) =>
      Array.isArray(statement.Action) ? statement.Action : [statement.Action],
    );
    assert.deepEqual(actions, ['ses:PutAccountSuppressionAttributes']);
  });

  it('alarms at 2.5 % bounces and 0.05 % complaints, notify the alarm topic and say what is at risk', () => {
    // The alarm topic (the stack has another: SES's inbound receipts, infra/stack/inbound.ts).
    const topicId = stack.getLogicalId(stack.alarms.topic.node.defaultChild as never);
    for (const [metric, threshold] of [
      ['Reputation.BounceRate', 0.025],
      ['Reputation.ComplaintRate', 0.0005],
    ] as const) {
      const alarm = alarmFor(metric).Properties;
      assert.equal(alarm.Namespace, 'AWS/SES');
      assert.equal(alarm.Threshold, threshold);
      assert.equal(alarm.ComparisonOperator, 'GreaterThanOrEqualToThreshold');
      assert.equal(alarm.Dimensions, undefined, 'the account-level rate SES reviews');
      assert.deepEqual(alarm.AlarmActions, [{ Ref: topicId }]);
      assert.match(alarm.AlarmDescription, /under review/);
      assert.match(alarm.AlarmDescription, /pause sending/);
      assert.match(alarm.AlarmDescription, /docs\/deliverability\.md/);
    }
    assert.equal(reputationThresholds.bounceRate, 0.05 / 2);
    assert.equal(reputationThresholds.complaintRate, 0.001 / 2);
  });
});

describe('suppression list storage and routes', () => {
  it('the table has the sparse suppressions index', () => {
    const [table] = Object.values(resourcesOfType(template, 'AWS::DynamoDB::Table'));
    assert.ok(table);
    const index = (table.Properties.GlobalSecondaryIndexes as Array<Record<string, any>>).find(
      (candidate) => candidate.IndexName === 'suppressions',
    );
    assert.ok(index);
    const definition = tableDefinition.indexes.find((candidate) => candidate.name === 'suppressions');
    assert.deepEqual(index.KeySchema, [
      { AttributeName: definition?.partitionKey, KeyType: 'HASH' },
      { AttributeName: definition?.sortKey, KeyType: 'RANGE' },
    ]);
  });

  it('each suppression route has its own function behind POST', () => {
    const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method')).filter(
      (method) => method.Properties.HttpMethod === 'POST',
    );
    const targets = JSON.stringify(methods.map((method) => method.Properties.Integration?.Uri));
    for (const id of ['suppressionquery', 'suppressionadd', 'suppressiondelete']) {
      assert.match(targets, new RegExp(`Route${id}Function`), id);
    }
  });
});
