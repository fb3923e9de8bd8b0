import assert from 'node:assert/strict';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, it } from 'vitest';
import { queueDefinition, tableDefinition } from '../../infra/resources/definitions.ts';
import { integersAbove } from '../../infra/stack/firewall.ts';
import { requestLimits } from '../../shared/platform/http/limits.ts';
import { routes } from '../../shared/routes.ts';
import { scheduledRoutes, workers } from '../../shared/workers.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

const { template } = synthService();
const only = (type: string, pattern: RegExp): [string, Record<string, any>] => {
  const entries = Object.entries(resourcesOfType(template, type)).filter(([id]) => pattern.test(id));
  assert.equal(entries.length, 1, `${type} ${pattern}`);
  return entries[0] as [string, Record<string, any>];
};
const [queueId, queue] = only('AWS::SQS::Queue', /^StorageSendQueue/);
const [dlqId, dlq] = only('AWS::SQS::Queue', /^StorageDeadLetterQueue/);
const [, senderFn] = only('AWS::Lambda::Function', /^WorkersenderFunction/);

describe('table', () => {
  it('has the keys, the three keys-only indexes, PITR, encryption and the TTL attribute of definitions.ts', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      TimeToLiveSpecification: { AttributeName: tableDefinition.ttlAttribute, Enabled: true },
      GlobalSecondaryIndexes: tableDefinition.indexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        // Keys only (gsi1 with the never-changing attributes the domain list reads): an update that
        // changes no index key writes nothing to an index (docs/data-model.md, "Projections").
        Projection:
          index.projection === 'INCLUDE'
            ? { ProjectionType: 'INCLUDE', NonKeyAttributes: [...index.nonKeyAttributes] }
            : { ProjectionType: index.projection },
      })),
    });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });
});

describe('queues', () => {
  it('send queue: SSE, redrive to the DLQ after maxReceiveCount, visibility ≥ 6 × the sender timeout', () => {
    assert.equal(queue.Properties.SqsManagedSseEnabled, true);
    assert.deepEqual(queue.Properties.RedrivePolicy, {
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: queueDefinition.maxReceiveCount,
    });
    assert.equal(senderFn.Properties.Timeout, queueDefinition.senderTimeoutSeconds);
    assert.ok(queue.Properties.VisibilityTimeout >= 6 * senderFn.Properties.Timeout);
    assert.equal(dlq.Properties.SqsManagedSseEnabled, true);
    assert.equal(dlq.Properties.MessageRetentionPeriod, queueDefinition.deadLetterRetentionSeconds);
  });

  it('both queues refuse plain-HTTP access', () => {
    for (const id of [queueId, dlqId]) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
  });

  it('the sender consumes the send queue in batches with ReportBatchItemFailures', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      FunctionName: { Ref: functionLogicalId(template, 'sender') },
      BatchSize: queueDefinition.batchSize,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it("the dead-letter function consumes the DLQ, and nothing else consumes either queue (the other mappings are the webhooks', the statistics' and the inbound queue's)", () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      FunctionName: { Ref: functionLogicalId(template, 'dead-letter') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // sender, dead-letter, the two webhook mappings (test/infra/webhooks.test.ts), the counting
    // consumer's table-stream mapping (test/infra/stats.test.ts) and the inbound queue's
    // (test/infra/inbound.test.ts).
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 6);
    const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'));
    const onSendQueues = mappings.filter((m) =>
      [queueId, dlqId].some((id) => JSON.stringify(m.Properties.EventSourceArn).includes(id)),
    );
    assert.equal(onSendQueues.length, 2);
  });
});

describe('schedules and events', () => {
  const rules = Object.values(resourcesOfType(template, 'AWS::Events::Rule'));
  const targetsOf = (rule: Record<string, any>) =>
    (rule.Properties.Targets as Array<{ Arn: unknown }>).map((target) => JSON.stringify(target.Arn));
  const invokes = (rule: Record<string, any>, functionId: string) =>
    targetsOf(rule).some((arn) => arn.includes(`"${functionLogicalId(template, functionId)}","Arn"`));

  for (const worker of workers.filter((w) => w.trigger === 'schedule')) {
    it(`${worker.id} runs every ${worker.everyMinutes} minute(s)`, () => {
      const matching = rules.filter((rule) => invokes(rule, worker.id));
      assert.equal(matching.length, 1);
      const minutes = worker.everyMinutes ?? 1;
      assert.equal(
        matching[0]?.Properties.ScheduleExpression,
        `rate(${minutes} minute${minutes === 1 ? '' : 's'})`,
      );
    });
  }

  for (const scheduled of scheduledRoutes) {
    it(`${scheduled.routeId} (POST keepalive) runs every ${scheduled.everyMinutes} minutes`, () => {
      const matching = rules.filter((rule) => invokes(rule, scheduled.routeId));
      assert.equal(matching.length, 1);
      const hours = scheduled.everyMinutes / 60;
      assert.ok(
        [`rate(${scheduled.everyMinutes} minutes)`, `rate(${hours} hour${hours === 1 ? '' : 's'})`].includes(
          matching[0]?.Properties.ScheduleExpression,
        ),
        matching[0]?.Properties.ScheduleExpression,
      );
      template.hasResourceProperties('AWS::Lambda::Permission', {
        FunctionName: { 'Fn::GetAtt': [functionLogicalId(template, scheduled.routeId), 'Arn'] },
        Principal: 'events.amazonaws.com',
      });
    });
  }

  it('SES publishes the configuration set’s events to EventBridge, routed to delivery-events', () => {
    const [configSetId] = Object.keys(resourcesOfType(template, 'AWS::SES::ConfigurationSet'));
    template.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      ConfigurationSetName: { Ref: configSetId },
      EventDestination: {
        Enabled: true,
        EventBridgeDestination: { EventBusArn: Match.anyValue() },
        MatchingEventTypes: Match.arrayWith(['delivery', 'bounce', 'complaint']),
      },
    });
    const sesRules = rules.filter((rule) => invokes(rule, 'delivery-events'));
    assert.equal(sesRules.length, 1);
    const pattern = sesRules[0]?.Properties.EventPattern;
    assert.deepEqual(pattern.source, ['aws.ses']);
    assert.ok(pattern['detail-type'].includes('Email Delivered'));
    assert.ok(pattern['detail-type'].includes('Email Bounced'));
    assert.deepEqual(pattern.detail.mail.tags['ses:configuration-set'], [{ Ref: configSetId }]);
    // Bounces SES's feedback endpoint receives at any domain's own MAIL FROM domain (a self-service
    // domain's mail_from) come through this rule too: it names no domain, only the configuration set.
    assert.deepEqual(Object.keys(pattern.detail), ['mail']);
    assert.deepEqual(Object.keys(pattern.detail.mail), ['tags']);
    assert.deepEqual(Object.keys(pattern.detail.mail.tags), ['ses:configuration-set']);
  });

  it('the sender is told the configuration set', () => {
    const [configSetId] = Object.keys(resourcesOfType(template, 'AWS::SES::ConfigurationSet'));
    assert.deepEqual(senderFn.Properties.Environment.Variables.SES_CONFIGURATION_SET, { Ref: configSetId });
  });
});

describe('SES region', () => {
  it('without sesRegion, no region rule; with it, CloudFormation refuses other regions', () => {
    assert.deepEqual(Object.keys(template.toJSON().Rules), ['CheckBootstrapVersion']);
    const { template: pinned } = synthService({ context: { sesRegion: 'eu-west-1' } });
    const rule = (pinned.toJSON().Rules as Record<string, any>).DeployInSesRegion;
    assert.deepEqual(rule.Assertions[0].Assert, { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'eu-west-1'] });
    assert.match(rule.Assertions[0].AssertDescription, /deploy this stack in that region/);
  });
});

describe('bucket and key', () => {
  it('object bucket: no public access, encryption, TLS only, access logs, lifecycle per prefix', () => {
    const [logBucketId] = only('AWS::S3::Bucket', /^StorageAccessLogBucket/);
    const [bucketId, bucket] = only('AWS::S3::Bucket', /^StorageObjectBucket/);
    assert.deepEqual(bucket.Properties.PublicAccessBlockConfiguration, {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    assert.equal(
      bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault
        .SSEAlgorithm,
      'AES256',
    );
    assert.deepEqual(bucket.Properties.LoggingConfiguration.DestinationBucketName, { Ref: logBucketId });
    const rules = bucket.Properties.LifecycleConfiguration.Rules as Array<Record<string, any>>;
    const byPrefix = (prefix: string) => rules.find((rule) => rule.Prefix === prefix);
    assert.equal(byPrefix('messages/')?.ExpirationInDays, 35);
    assert.equal(byPrefix('avatars/')?.ExpirationInDays, 2);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('message retention follows context retentionDays', () => {
    const { template: custom } = synthService({ context: { retentionDays: '90' } });
    custom.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ Prefix: 'messages/', ExpirationInDays: 90 })]),
      },
    });
  });

  it('the DKIM key rotates and is retained', () => {
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
  });
});

/**
 * What WAF does with a key's text transformations, as its developer guide describes the two used
 * here (applied in priority order): LOWERCASE; COMPRESS_WHITE_SPACE turns \f \t \n \r \v and
 * non-breaking spaces into spaces and runs of spaces into one.
 */
function wafTransform(value: string, transformations: Array<{ Priority: number; Type: string }>): string {
  let text = value;
  for (const { Type } of [...transformations].sort((a, b) => a.Priority - b.Priority)) {
    if (Type === 'LOWERCASE') text = text.toLowerCase();
    else if (Type === 'COMPRESS_WHITE_SPACE') text = text.replace(/[\f\t\n\r\v\u00a0 ]+/g, ' ');
    else throw new Error(`transformation ${Type} is not modelled here`);
  }
  return text;
}

describe('firewall', () => {
  const { template: blocked } = synthService({
    context: { blockedCidrs: '203.0.113.0/24, 2001:db8::/32', rateLimitRps: '2' },
  });

  it('blocks the context networks (IPv4 and IPv6) with 401 and code 103', () => {
    blocked.hasResourceProperties('AWS::WAFv2::IPSet', {
      IPAddressVersion: 'IPV4',
      Addresses: ['203.0.113.0/24'],
    });
    blocked.hasResourceProperties('AWS::WAFv2::IPSet', {
      IPAddressVersion: 'IPV6',
      Addresses: ['2001:db8::/32'],
    });
    const [acl] = Object.values(resourcesOfType(blocked, 'AWS::WAFv2::WebACL'));
    const rule = acl?.Properties.Rules.find((r: { Name: string }) => r.Name === 'blocked-networks');
    assert.deepEqual(rule.Action.Block.CustomResponse, {
      ResponseCode: 401,
      CustomResponseBodyKey: 'ip-blocked',
      ResponseHeaders: [{ Name: 'x-request-id', Value: 'waf-blocked-networks' }],
    });
    const body = acl?.Properties.CustomResponseBodies['ip-blocked'];
    assert.equal(body.ContentType, 'APPLICATION_JSON');
    assert.equal(JSON.parse(body.Content).error.code, 103);
  });

  it('rate-limits per Authorization header and per address for every request, with 429 and code 115', () => {
    const [acl] = Object.values(resourcesOfType(blocked, 'AWS::WAFv2::WebACL'));
    const rules = acl?.Properties.Rules as Array<Record<string, any>>;
    const perToken = rules.find((r) => r.Name === 'rate-per-token');
    // The key is the header lower-cased with its blanks compressed, so spellings count as one.
    const customKeys = perToken?.Statement.RateBasedStatement.CustomKeys;
    assert.deepEqual(customKeys, [
      {
        Header: {
          Name: 'authorization',
          TextTransformations: [
            { Priority: 0, Type: 'LOWERCASE' },
            { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
          ],
        },
      },
    ]);
    const transformations = customKeys?.[0]?.Header.TextTransformations ?? [];
    const keyOf = (header: string) => wafTransform(header, transformations);
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0.c2ln';
    const variants = [`Bearer ${token}`, `bearer  ${token}`, `BEARER ${token}`, `Bearer\t${token}`];
    assert.equal(new Set(variants.map(keyOf)).size, 1, 'every spelling of one token is one key');
    assert.notEqual(keyOf(`Bearer ${token}x`), keyOf(`Bearer ${token}`));
    assert.equal(perToken?.Statement.RateBasedStatement.Limit, 120);
    const perAddress = rules.find((r) => r.Name === 'rate-per-address');
    assert.equal(perAddress?.Statement.RateBasedStatement.AggregateKeyType, 'IP');
    // Every request counts for its address, token or not: random tokens cannot sidestep it.
    assert.equal(perAddress?.Statement.RateBasedStatement.ScopeDownStatement, undefined);
    for (const rule of [perToken, perAddress]) {
      assert.deepEqual(rule?.Action.Block.CustomResponse, {
        ResponseCode: 429,
        CustomResponseBodyKey: 'too-many-requests',
        ResponseHeaders: [{ Name: 'x-request-id', Value: `waf-${rule?.Name}` }],
      });
    }
    assert.equal(
      JSON.parse(acl?.Properties.CustomResponseBodies['too-many-requests'].Content).error.code,
      115,
    );
  });

  it('answers a Content-Length over the body limit itself, with 406 and code 107 naming the limit', () => {
    const [acl] = Object.values(resourcesOfType(blocked, 'AWS::WAFv2::WebACL'));
    const rules = acl?.Properties.Rules as Array<Record<string, any>>;
    const rule = rules.find((r) => r.Name === 'body-too-large');
    const match = rule?.Statement.RegexMatchStatement;
    assert.deepEqual(match?.FieldToMatch, { SingleHeader: { Name: 'content-length' } });
    assert.deepEqual(rule?.Action.Block.CustomResponse, {
      ResponseCode: 406,
      CustomResponseBodyKey: 'body-too-large',
      ResponseHeaders: [{ Name: 'x-request-id', Value: 'waf-body-too-large' }],
    });
    const body = JSON.parse(acl?.Properties.CustomResponseBodies['body-too-large'].Content);
    assert.equal(body.error.code, 107);
    assert.match(body.error.details[0].message, /at most 6 MB/);
    // The pattern matches exactly the lengths over the limit (WAF's regex, like JavaScript's here).
    const over = new RegExp(match?.RegexString);
    const limit = requestLimits.maxBodyBytes;
    for (const length of [0, 1, 999, limit - 1_000_000, limit - 1, limit, 5_999_999, 999_999])
      assert.ok(!over.test(String(length)), `${length} is within the limit`);
    for (const length of [
      limit + 1,
      limit + 9,
      limit + 10,
      limit + 999_999,
      6_100_000,
      7_000_000,
      9_999_999,
      10_000_000,
      123_456_789,
    ])
      assert.ok(over.test(String(length)), `${length} is over the limit`);
    assert.ok(over.test(`00${limit + 1}`) && !over.test(`00${limit}`), 'leading zeros');
    assert.ok(!over.test('') && !over.test('6000001 ') && !over.test('abc'));
    // Every limit's pattern against every length around it.
    for (const anyLimit of [0, 9, 10, 99, 100, 190, 909, 6_000_000, 6_291_456]) {
      const pattern = new RegExp(integersAbove(anyLimit));
      for (let length = Math.max(0, anyLimit - 120); length <= anyLimit + 1200; length++)
        assert.equal(pattern.test(String(length)), length > anyLimit, `${length} vs ${anyLimit}`);
    }
    assert.ok(match?.RegexString.length <= 512, 'within WAF’s pattern length');
  });

  it('is associated with the API stage', () => {
    const [stageId] = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::Stage'));
    const [association] = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACLAssociation'));
    assert.ok(JSON.stringify(association?.Properties.ResourceArn).includes(`{"Ref":"${stageId}"}`));
  });
});

describe('alarms and outputs', () => {
  const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
  const describing = (pattern: RegExp) =>
    alarms.filter((alarm) => pattern.test(alarm.Properties.AlarmDescription));

  it('alarms on DLQ receipts and depth, the API 5xx rate and throttles, saying what users lose', () => {
    const dlqAlarms = alarms.filter((alarm) =>
      JSON.stringify(alarm.Properties.Dimensions ?? []).includes(dlqId),
    );
    assert.deepEqual(dlqAlarms.map((alarm) => alarm.Properties.MetricName).sort(), [
      'ApproximateNumberOfMessagesVisible',
      'NumberOfMessagesReceived',
    ]);
    const receipts = dlqAlarms.find((alarm) => alarm.Properties.MetricName === 'NumberOfMessagesReceived');
    assert.match(receipts?.Properties.AlarmDescription, /will not reach their recipients/);
    // Replaced by the failed-send metric: the sender reports batch item failures, so Errors stays 0.
    assert.equal(describing(/sender function is failing/).length, 0);
    const apiAlarm = alarms.find((alarm) =>
      JSON.stringify(alarm.Properties.Metrics ?? []).includes('5XXError'),
    );
    assert.match(apiAlarm?.Properties.AlarmDescription, /callers cannot/);
    const throttles = alarms.filter((alarm) => alarm.Properties.MetricName === 'Throttles');
    assert.equal(throttles.length, routes.length + workers.length, 'one per function');
    for (const alarm of alarms) {
      assert.ok(alarm.Properties.AlarmDescription.length > 40);
      assert.equal(alarm.Properties.AlarmActions.length, 1);
    }
  });

  it('outputs the API URL and the table, queue and bucket names', () => {
    const outputs = template.toJSON().Outputs as Record<string, unknown>;
    for (const name of ['ApiUrl', 'TableName', 'QueueUrl', 'QueueName', 'BucketName']) {
      assert.ok(name in outputs, `missing output ${name}`);
    }
  });
});
