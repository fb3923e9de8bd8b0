import assert from 'node:assert/strict';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, it } from 'vitest';
import { synthService } from '../support/infra.ts';

// The app as `cdk synth` builds it: cdk-nag's AwsSolutions and Serverless packs and CDK's CloudFormation validation.
// Synthesis throws on any unacknowledged finding; keep the error for the first test to report.
let synthesized: ReturnType<typeof synthService> | undefined;
let synthError: unknown;
try {
  synthesized = synthService({ cloudFormationValidation: true });
} catch (error) {
  synthError = error;
}

// The same with the optional SMTP submission host (infra/stack/smtp-submission.ts) and its secret by name.
let withSubmission: ReturnType<typeof synthService> | undefined;
let withSubmissionError: unknown;
try {
  withSubmission = synthService({
    cloudFormationValidation: true,
    context: { smtpSubmission: true, smtpSubmissionCertificateSecret: 'svc-mail/submission-tls' },
  });
} catch (error) {
  withSubmissionError = error;
}

describe('cdk-nag AwsSolutionsChecks and ServerlessChecks', () => {
  it('with the SMTP submission host, finds nothing unacknowledged either, each acknowledgement with a reason', () => {
    assert.equal(withSubmissionError, undefined, String(withSubmissionError));
    assert.ok(withSubmission);
    const submission = withSubmission.stack.acknowledgements.filter(({ resource }) =>
      resource.startsWith('SvcMail/SmtpSubmission/'),
    );
    assert.deepEqual(submission.map(({ rule }) => rule).sort(), [
      'AwsSolutions-EC23',
      'AwsSolutions-ECS2',
      'AwsSolutions-ECS4',
      'AwsSolutions-ELB2',
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AwsSolutions-IAM5[Resource::*]',
      'Serverless-LambdaDLQ',
      'Serverless-LambdaDefaultMemorySize',
      'Serverless-LambdaTracing',
    ]);
    for (const { reason } of submission) assert.ok(reason.length >= 60);
    const star = submission.find(({ rule }) => rule === 'AwsSolutions-IAM5[Resource::*]');
    assert.equal(star?.resource, 'SvcMail/SmtpSubmission/SmtpSubmission/Task/ExecutionRole');
  });

  it('is applied to the app and finds nothing unacknowledged (synthesis fails on any finding)', () => {
    assert.equal(synthError, undefined, String(synthError));
    assert.ok(synthesized);
  });

  it('does fail synthesis on a finding in this setup (so the check above can fail)', () => {
    const probe = new App();
    const probeStack = new Stack(probe, 'Probe');
    new sqs.Queue(probeStack, 'PlainQueue', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    Validations.of(probe).addPlugins(new AwsSolutionsChecks(probe));
    assert.throws(() => probe.synth(), /Validation failed|AwsSolutions/);
  });

  it('the Serverless pack also fails synthesis on a finding (a queue without a redrive policy)', () => {
    const probe = new App();
    const probeStack = new Stack(probe, 'Probe');
    new sqs.Queue(probeStack, 'LoneQueue', { encryption: sqs.QueueEncryption.SQS_MANAGED, enforceSSL: true });
    Validations.of(probe).addPlugins(new ServerlessChecks(probe));
    assert.throws(() => probe.synth(), /Serverless-SQSRedrivePolicy/);
  });

  it('every acknowledgement names the rule, the resource and a reason', () => {
    assert.ok(synthesized);
    const { stack } = synthesized;
    assert.ok(stack.acknowledgements.length > 0);
    for (const acknowledgement of stack.acknowledgements) {
      assert.match(acknowledgement.rule, /^(AwsSolutions-[A-Z]+\d+(\[.+\])?|Serverless-[A-Za-z]+)$/);
      assert.match(acknowledgement.resource, /^SvcMail\//);
      assert.ok(acknowledgement.reason.length >= 60, `${acknowledgement.rule}: reason too short`);
    }
  });

  it("acknowledges wildcards only for object prefixes, SES identities, the stream listing and X-Ray, never for actions (but in CDK's deploy-time BucketDeployment)", () => {
    assert.ok(synthesized);
    const wildcards = synthesized.stack.acknowledgements.filter((a) =>
      a.rule.startsWith('AwsSolutions-IAM5'),
    );
    // CDK's BucketDeployment function (deploy-time: it copies the built console into its bucket) is
    // the one role whose wildcards CDK writes: its grant methods' action groups, on the console
    // bucket and CDK's asset bucket only, and CloudFront invalidation (checked in the template below).
    const deployer = /^SvcMail\/Custom::CDKBucketDeployment[0-9A-Fa-f]+256MiB$/;
    for (const { rule } of wildcards.filter(({ resource }) => deployer.test(resource))) {
      assert.match(
        rule,
        /^AwsSolutions-IAM5\[(Action::s3:(GetObject|GetBucket|List|DeleteObject|Abort)\*|Resource::(\*|<ConsoleAssets\w+\.Arn>\/\*|arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>\/\*))\]$/,
      );
    }
    for (const { rule, resource } of wildcards.filter(({ resource }) => !deployer.test(resource))) {
      // (Functions live in nested stacks, where the bucket's ARN arrives as a parameter.)
      // Actions without resource-level permissions: the account's SES suppression setting
      // (infra/stack/reputation.ts), dynamodb:ListStreams for the table-stream mapping (webhook-fanout)
      // and the X-Ray actions of active tracing on each function's role.
      if (rule === 'AwsSolutions-IAM5[Resource::*]') {
        assert.match(
          resource,
          /^SvcMail\/(Reputation\/AccountSuppression|Inbound\/ActivateRuleSet|Functions[A-Za-z]+\/(Route|Worker)-[a-z-]+\/Role)$/,
        );
        continue;
      }
      assert.match(
        rule,
        /^AwsSolutions-IAM5\[Resource::(<(referencetoSvcMail)?StorageObjectBucket\w+(\.)?Arn>\/(messages|avatars|housekeeping|inbound|templates)\/\*|arn:.*:identity\/\*)\]$/,
      );
    }
    const fanout = synthesized.template.toJSON().Resources as Record<
      string,
      {
        Type: string;
        Properties: {
          PolicyDocument?: { Statement: Array<{ Action: string | string[]; Resource: unknown }> };
        };
      }
    >;
    const starStatements = Object.entries(fanout)
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('Workerwebhookfanout'))
      .flatMap(([, r]) => r.Properties.PolicyDocument?.Statement ?? [])
      .filter((statement) => statement.Resource === '*');
    // ListStreams, plus the two X-Ray actions every function's role has (active tracing).
    assert.deepEqual(starStatements.map((statement) => statement.Action).sort(), [
      'dynamodb:ListStreams',
      ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'],
    ]);
    const deployerStar = Object.entries(fanout)
      .filter(([id, r]) => r.Type === 'AWS::IAM::Policy' && id.startsWith('CustomCDKBucketDeployment'))
      .flatMap(([, r]) => r.Properties.PolicyDocument?.Statement ?? [])
      .filter((statement) => statement.Resource === '*');
    assert.deepEqual(
      deployerStar.map((statement) => statement.Action),
      [['cloudfront:GetInvalidation', 'cloudfront:CreateInvalidation']],
    );
  });
});
