import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { inboundQueueDefinition } from '../../infra/resources/definitions.ts';
import { receiptRuleName } from '../../infra/stack/inbound.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

/**
 * Receiving on AWS (infra/stack/inbound.ts, docs/inbound.md): the receipt rule set with one rule for
 * every verified domain (the table decides which receive), SES storing in the bucket and publishing to the topic for this rule of this
 * account only, the topic feeding the inbound queue raw, the queue feeding the inbound function.
 */
const { stack, template } = synthService({
  context: { receiving: 'true' },
});
const id = (construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as never);
const json = (value: unknown) => JSON.stringify(value);

describe('inbound receiving on AWS', () => {
  it('one receipt rule without a recipient list (every verified domain; the table decides): scan on, S3 action under inbound/raw/ that notifies the topic', () => {
    const rules = Object.values(resourcesOfType(template, 'AWS::SES::ReceiptRule'));
    assert.equal(rules.length, 1);
    const rule = rules[0]?.Properties.Rule;
    assert.equal(rule.Name, receiptRuleName);
    assert.equal(rule.Recipients, undefined, 'no domain is named at deploy time');
    assert.equal(rule.ScanEnabled, true);
    assert.equal(rule.Enabled, true);
    assert.equal(rule.Actions.length, 1);
    const action = rule.Actions[0].S3Action;
    assert.equal(action.ObjectKeyPrefix, 'inbound/raw/');
    assert.deepEqual(action.BucketName, { Ref: id(stack.storage.bucket) });
    assert.deepEqual(action.TopicArn, { Ref: id(stack.inbound.topic) });
    template.resourceCountIs('AWS::SES::ReceiptRuleSet', 1);
    // CloudFormation cannot activate a rule set: the custom resource does, and deactivates it on delete.
    const activation = Object.values(resourcesOfType(template, 'Custom::SesActiveReceiptRuleSet'));
    assert.equal(activation.length, 1);
    assert.match(json(activation[0]?.Properties.Create), /SetActiveReceiptRuleSet.*RuleSetName.*-inbound/);
    assert.doesNotMatch(json(activation[0]?.Properties.Delete), /RuleSetName/);
  });

  it('SES may write to the bucket and publish to the topic only for this rule of this account', () => {
    const bucketPolicy = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).find((policy) =>
      json(policy.Properties.Bucket).includes(id(stack.storage.bucket)),
    );
    assert.ok(bucketPolicy, 'the bucket has a policy');
    const sesStatements = (
      bucketPolicy.Properties.PolicyDocument.Statement as Array<Record<string, any>>
    ).filter((statement) => json(statement.Principal).includes('ses.amazonaws.com'));
    assert.equal(sesStatements.length, 1, 'one statement for SES');
    const statement = sesStatements[0] as Record<string, any>;
    assert.equal(statement.Action, 's3:PutObject');
    assert.match(json(statement.Resource), /\/inbound\/raw\/\*/);
    assert.deepEqual(Object.keys(statement.Condition.StringEquals).sort(), [
      'aws:SourceAccount',
      'aws:SourceArn',
    ]);
    assert.match(
      json(statement.Condition.StringEquals['aws:SourceArn']),
      /receipt-rule-set\/.*-inbound:receipt-rule\/store-in-s3/,
    );

    const topicPolicy = Object.values(resourcesOfType(template, 'AWS::SNS::TopicPolicy'))[0];
    assert.ok(topicPolicy, 'the topic has a policy');
    const publish = (topicPolicy.Properties.PolicyDocument.Statement as Array<Record<string, any>>).find(
      (entry) => json(entry.Principal).includes('ses.amazonaws.com'),
    );
    assert.equal(publish?.Action, 'sns:Publish');
    assert.deepEqual(Object.keys(publish?.Condition.StringEquals).sort(), [
      'aws:SourceAccount',
      'aws:SourceArn',
    ]);
  });

  it('the topic delivers raw to the inbound queue (dead-letter queue for what it cannot deliver)', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      RawMessageDelivery: true,
      Endpoint: { 'Fn::GetAtt': [id(stack.storage.inboundQueue), 'Arn'] },
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [id(stack.storage.inboundDeadLetterQueue), 'Arn'] },
      },
    });
  });

  it('the inbound function consumes the queue (visibility 6 × its timeout), and its failures redrive to the DLQ', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [id(stack.storage.inboundQueue), 'Arn'] },
      FunctionName: { Ref: functionLogicalId(template, 'inbound') },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: inboundQueueDefinition.batchSize,
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      VisibilityTimeout: inboundQueueDefinition.visibilityTimeoutSeconds,
      RedrivePolicy: { maxReceiveCount: inboundQueueDefinition.maxReceiveCount },
    });
    const fn = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, 'inbound')];
    assert.equal(fn?.Properties.Timeout, inboundQueueDefinition.functionTimeoutSeconds);
    assert.ok(
      inboundQueueDefinition.visibilityTimeoutSeconds >= 6 * inboundQueueDefinition.functionTimeoutSeconds,
    );
    assert.equal(fn?.Properties.Environment.Variables.RETENTION_DAYS, '35');
    // The sender's SES id records (threading of replies to mail sent through SES) live as long.
    const sender = resourcesOfType(template, 'AWS::Lambda::Function')[functionLogicalId(template, 'sender')];
    assert.equal(sender?.Properties.Environment.Variables.RETENTION_DAYS, '35');
  });

  it('received mail expires with the retention, and an alarm watches the dead-letter queue', () => {
    const bucket = resourcesOfType(template, 'AWS::S3::Bucket')[id(stack.storage.bucket)];
    assert.ok(bucket);
    const rule = (bucket.Properties.LifecycleConfiguration.Rules as Array<Record<string, unknown>>).find(
      (entry) => entry.Id === 'expire-inbound-objects',
    );
    assert.deepEqual(rule, {
      Id: 'expire-inbound-objects',
      Prefix: 'inbound/',
      ExpirationInDays: 35,
      Status: 'Enabled',
    });
    const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
    assert.ok(
      alarms.some(
        (alarm) =>
          String(json(alarm.Properties.Dimensions)).includes(id(stack.storage.inboundDeadLetterQueue)) &&
          /Received mail could not be stored/.test(alarm.Properties.AlarmDescription),
      ),
    );
  });

  it('without receiving there is no receipt rule set at all', () => {
    const plain = synthService();
    plain.template.resourceCountIs('AWS::SES::ReceiptRuleSet', 0);
    plain.template.resourceCountIs('AWS::SES::ReceiptRule', 0);
    plain.template.resourceCountIs('Custom::SesActiveReceiptRuleSet', 0);
  });

  it('fails synth when the removed receivingDomains is still set, naming what replaced it', () => {
    assert.throws(
      () => synthService({ context: { receiving: 'true', receivingDomains: ['inbound.example.com'] } }),
      /receivingDomains is no longer read: receiving follows the table\. Set receiving=true/,
    );
  });
});
