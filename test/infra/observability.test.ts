import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { messageMetric, webhookMetric } from '../../shared/platform/observability/metric-names.ts';
import { routes } from '../../shared/routes.ts';
import { workers } from '../../shared/workers.ts';
import { environmentOf, functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

// What the review of the synthesized template found, each fix pinned; and the dashboard and alarms
// built on the service's own metrics.
const { template, stack } = synthService({ context: { stackName: 'MailProd' } });
const resources = template.toJSON().Resources as Record<
  string,
  { Type: string; Properties: any; DependsOn?: any }
>;
const ofType = (type: string) => resourcesOfType(template, type);
const idOf = (type: string, pattern: RegExp): string => {
  const ids = Object.keys(ofType(type)).filter((id) => pattern.test(id));
  assert.equal(ids.length, 1, `${type} ${pattern}: ${ids.join(', ')}`);
  return ids[0] as string;
};
const alarms = Object.values(ofType('AWS::CloudWatch::Alarm'));
const alarmOn = (metricName: string) =>
  alarms.filter((alarm) => JSON.stringify(alarm.Properties).includes(`"${metricName}"`));
const topicId = idOf('AWS::SNS::Topic', /^AlarmsTopic/);
const dlqId = idOf('AWS::SQS::Queue', /^StorageDeadLetterQueue/);
const eventsDlqId = idOf('AWS::SQS::Queue', /^StorageEventsDeadLetterQueue/);

describe('alarm topic', () => {
  const policy = Object.values(ofType('AWS::SNS::TopicPolicy')).find((p) =>
    JSON.stringify(p.Properties.Topics).includes(topicId),
  );
  const statements = (policy?.Properties.PolicyDocument.Statement ?? []) as Array<Record<string, any>>;

  it('keeps the TLS-only Deny and allows cloudwatch.amazonaws.com to publish, for this account’s alarms only', () => {
    assert.ok(
      statements.some(
        (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('aws:SecureTransport'),
      ),
    );
    const allow = statements.find(
      (s) => s.Effect === 'Allow' && s.Principal?.Service === 'cloudwatch.amazonaws.com',
    );
    assert.ok(allow, 'no Allow for CloudWatch');
    assert.equal(allow.Action, 'sns:Publish');
    assert.deepEqual(allow.Condition.StringEquals, { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } });
    assert.match(JSON.stringify(allow.Condition.ArnLike['aws:SourceArn']), /:cloudwatch:.*:alarm:\*/);
  });

  it('every alarm notifies the topic', () => {
    for (const alarm of alarms) assert.deepEqual(alarm.Properties.AlarmActions, [{ Ref: topicId }]);
  });
});

describe('alarms that can fire, saying what the user loses', () => {
  it('alarms on dead-letter queue receipts (the queue is drained within seconds, so depth stays 0)', () => {
    const receipts = alarmOn('NumberOfMessagesReceived').filter((a) =>
      JSON.stringify(a.Properties.Dimensions).includes(dlqId),
    );
    assert.equal(receipts.length, 1);
    assert.equal(receipts[0]?.Properties.Statistic, 'Sum');
    assert.equal(receipts[0]?.Properties.Threshold, 1);
    assert.match(receipts[0]?.Properties.AlarmDescription, /will not reach their recipients/);
  });

  it('alarms on the failed-send metric instead of the sender’s Lambda errors', () => {
    const failed = alarmOn(messageMetric.failed);
    assert.equal(failed.length, 1);
    const stat = failed[0]?.Properties.Metrics[0].MetricStat;
    assert.equal(stat.Metric.Namespace, 'SvcMail');
    assert.deepEqual(stat.Metric.Dimensions, [{ Name: 'service', Value: 'MailProd' }]);
    assert.equal(stat.Stat, 'Sum');
    assert.equal(failed[0]?.Properties.Threshold, 1);
    assert.match(failed[0]?.Properties.AlarmDescription, /recipients will not get them/);
    // No alarm on the sender's Errors (the webhook fan-out's Errors alarm is the only Errors alarm).
    const errors = alarmOn('Errors');
    assert.ok(
      errors.every((alarm) => /fan-out/.test(alarm.Properties.AlarmDescription)),
      'Errors alarm',
    );
  });

  it('alarms on webhook failures, dropped SES events and the API 5xx rate (bounce rate: SES reputation alarms)', () => {
    assert.match(alarmOn(webhookMetric.failures)[0]?.Properties.AlarmDescription, /receivers are down/);
    const dropped = alarms.filter((a) => JSON.stringify(a.Properties.Dimensions ?? []).includes(eventsDlqId));
    assert.equal(dropped.length, 1);
    assert.match(dropped[0]?.Properties.AlarmDescription, /stale status/);
    // The bounce rate is alarmed on SES's own Reputation.BounceRate, not a second time on our counters.
    assert.equal(alarmOn(messageMetric.bounced).length, 0);
    assert.equal(alarmOn('Reputation.BounceRate').length, 1);
    const api = alarmOn('5XXError');
    assert.equal(api.length, 1);
    assert.match(JSON.stringify(api[0]?.Properties.Metrics), /"ApiName","Value":"MailProd"/);
  });
});

describe('SES events are never silently dropped', () => {
  const fnId = functionLogicalId(template, 'delivery-events');

  it('delivery-events has an on-failure destination: the events dead-letter queue', () => {
    const configs = Object.values(ofType('AWS::Lambda::EventInvokeConfig')).filter(
      (c) => JSON.stringify(c.Properties.FunctionName) === JSON.stringify({ Ref: fnId }),
    );
    assert.equal(configs.length, 1);
    assert.deepEqual(configs[0]?.Properties.DestinationConfig.OnFailure.Destination, {
      'Fn::GetAtt': [eventsDlqId, 'Arn'],
    });
  });

  it('the SES events rule target has the same dead-letter queue', () => {
    const rule = Object.values(ofType('AWS::Events::Rule')).find((r) =>
      JSON.stringify(r.Properties.EventPattern ?? {}).includes('aws.ses'),
    );
    assert.deepEqual(rule?.Properties.Targets[0].DeadLetterConfig, {
      Arn: { 'Fn::GetAtt': [eventsDlqId, 'Arn'] },
    });
    assert.equal(rule?.Properties.Targets[0].RetryPolicy.MaximumRetryAttempts, 8);
  });
});

describe('API, table and tracing', () => {
  const apiId = idOf('AWS::ApiGateway::RestApi', /^HttpApi/);
  const stage = Object.entries(ofType('AWS::ApiGateway::Stage'))[0];

  it('names the REST API after the stack', () => {
    assert.equal(resources[apiId]?.Properties.Name, 'MailProd');
  });

  it('creates the execution-log group with a retention before the stage', () => {
    const groups = Object.entries(ofType('AWS::Logs::LogGroup')).filter(([, g]) =>
      JSON.stringify(g.Properties.LogGroupName ?? '').includes('API-Gateway-Execution-Logs_'),
    );
    assert.equal(groups.length, 1);
    const [groupId, group] = groups[0] as [string, { Properties: any }];
    assert.match(JSON.stringify(group.Properties.LogGroupName), new RegExp(`${apiId}.*/prod`));
    assert.ok(group.Properties.RetentionInDays > 0);
    assert.ok([stage?.[1].DependsOn ?? resources[stage?.[0] as string]?.DependsOn].flat().includes(groupId));
  });

  it('turns on table deletion protection', () => {
    const table = Object.values(ofType('AWS::DynamoDB::Table'))[0];
    assert.equal(table?.Properties.DeletionProtectionEnabled, true);
  });

  it('traces the stage and every function with X-Ray; the only wildcard resource is X-Ray’s', () => {
    assert.equal(stage?.[1].Properties.TracingEnabled, true);
    for (const id of [...routes.map((r) => r.id), ...workers.map((w) => w.id)]) {
      assert.deepEqual(
        resources[functionLogicalId(template, id)]?.Properties.TracingConfig,
        { Mode: 'Active' },
        id,
      );
    }
    // On the functions' roles (the SES account-setting custom resource has its own "*", see nag.test.ts).
    const functionPolicies = Object.entries(ofType('AWS::IAM::Policy')).filter(([id]) =>
      /^(Route|Worker)/.test(id),
    );
    assert.ok(functionPolicies.length >= 14);
    for (const [, policy] of functionPolicies) {
      for (const statement of policy.Properties.PolicyDocument.Statement as Array<Record<string, any>>) {
        if (statement.Resource !== '*') continue;
        // dynamodb:ListStreams (the webhook fan-out's table-stream mapping) has no resource-level permissions either.
        if (statement.Action === 'dynamodb:ListStreams') continue;
        assert.deepEqual([statement.Action].flat().sort(), [
          'xray:PutTelemetryRecords',
          'xray:PutTraceSegments',
        ]);
      }
    }
  });

  it('every function publishes its metrics under the stack’s name', () => {
    for (const id of [...routes.map((r) => r.id), ...workers.map((w) => w.id)]) {
      const env = environmentOf(template, id);
      assert.equal(env.POWERTOOLS_METRICS_NAMESPACE, 'SvcMail', id);
      assert.equal(env.POWERTOOLS_SERVICE_NAME, 'MailProd', id);
    }
  });
});

describe('dashboard', () => {
  const dashboards = Object.values(ofType('AWS::CloudWatch::Dashboard'));
  const body = JSON.stringify(dashboards[0]?.Properties.DashboardBody);

  it('is one dashboard named after the stack', () => {
    assert.equal(dashboards.length, 1);
    assert.equal(dashboards[0]?.Properties.DashboardName, 'MailProd');
    assert.equal(stack.dashboard.dashboard.node.id, 'Dashboard');
  });

  it('graphs every message and webhook metric, the latency of every route, the 5xx rate and the DLQ', () => {
    for (const name of [...Object.values(messageMetric), ...Object.values(webhookMetric)]) {
      assert.ok(body.includes(`\\"${name}\\"`), `dashboard lacks ${name}`);
    }
    for (const route of routes) assert.ok(body.includes(`${route.method} ${route.path}`), route.id);
    assert.ok(body.includes('5XXError'));
    assert.ok(body.includes('NumberOfMessagesReceived'));
    assert.ok(!/account/i.test(body), 'no per-account dimension');
  });

  it('shows the state of every alarm, the SES reputation alarms included', () => {
    const referenced = body.match(/"Fn::GetAtt\\?":\[\\?"(?:Alarms|Reputation)\w+\\?",\\?"Arn\\?"\]/g) ?? [];
    assert.equal(referenced.length, alarms.length);
  });
});
