import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

/**
 * Reputation thresholds, as fractions (SES publishes the rates between 0 and 1). Amazon SES places
 * an account under review at a 5 % bounce rate or a 0.1 % complaint rate and may pause its sending
 * at 10 % / 0.5 %; the alarms fire at half of the review levels (docs/deliverability.md).
 */
export const reputationThresholds = {
  bounceRate: 0.025,
  complaintRate: 0.0005,
} as const;

/** The reasons SES adds an address to the account-level suppression list. */
export const accountSuppressedReasons = ['BOUNCE', 'COMPLAINT'] as const;

export interface ReputationGuardProps {
  /** Where the alarms notify (the stack's alarm topic). */
  readonly topic: sns.ITopic;
  /** Turn on SES's account-level suppression list (context `sesAccountSuppression`, off by default). */
  readonly accountSuppression: boolean;
}

/**
 * SES-side guardrails behind the service's own suppression list:
 * - with `accountSuppression` only: the account-level suppression list turned on for bounces and
 *   complaints. It is one list for every tenant of the deployment (and every other workload of the
 *   AWS account), so it is off by default for multi-tenant deployments. CloudFormation has no
 *   property for it, so a custom resource calls SESv2 `PutAccountSuppressionAttributes` on create and
 *   update (its role may call that one action, which has no resource-level permissions). Deleting the
 *   stack leaves the setting on: it is account-wide, and turning it off would weaken every sender of
 *   the account;
 * - alarms on the account's `Reputation.BounceRate` and `Reputation.ComplaintRate` (namespace
 *   AWS/SES, no dimensions: the rates SES reviews) that say what the user risks.
 * The configuration set's own reputation metrics and suppression options are set on the
 * configuration set itself (service-stack.ts).
 */
export class ReputationGuard extends Construct {
  readonly accountSuppression: cr.AwsCustomResource | undefined;
  readonly bounceRateAlarm: cloudwatch.Alarm;
  readonly complaintRateAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: ReputationGuardProps) {
    super(scope, id);
    const call: cr.AwsSdkCall = {
      service: 'SESv2',
      action: 'PutAccountSuppressionAttributes',
      parameters: { SuppressedReasons: [...accountSuppressedReasons] },
      physicalResourceId: cr.PhysicalResourceId.of('ses-account-suppression-bounce-complaint'),
    };
    this.accountSuppression = !props.accountSuppression
      ? undefined
      : new cr.AwsCustomResource(this, 'AccountSuppression', {
          resourceType: 'Custom::SesAccountSuppression',
          onCreate: call,
          onUpdate: call,
          // The SDK in the Lambda runtime has this call; no download at deploy time.
          installLatestAwsSdk: false,
          policy: cr.AwsCustomResourcePolicy.fromStatements([
            new iam.PolicyStatement({
              sid: 'TurnOnSesAccountSuppression',
              actions: ['ses:PutAccountSuppressionAttributes'],
              // The action supports no resource-level permissions (Service Authorization Reference).
              resources: ['*'],
            }),
          ]),
          timeout: Duration.minutes(2),
        });

    const rate = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/SES',
        metricName,
        statistic: 'Maximum',
        period: Duration.minutes(15),
      });
    const alarm = (alarmId: string, metric: cloudwatch.Metric, threshold: number, description: string) => {
      const created = new cloudwatch.Alarm(this, alarmId, {
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        // SES publishes the rates only once there were bounces or complaints.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: description,
      });
      created.addAlarmAction(new SnsAction(props.topic));
      return created;
    };
    this.bounceRateAlarm = alarm(
      'BounceRate',
      rate('Reputation.BounceRate'),
      reputationThresholds.bounceRate,
      'The SES account bounce rate reached 2.5% (half of the 5% at which AWS places an account under review; ' +
        'at 10% it may pause sending). If it keeps rising, SES may stop sending for every account of this ' +
        'service. Find the sending account with the most hard bounces (POST /suppression/query-1.0, reason ' +
        'hard_bounce), stop mail to unverified lists, see docs/deliverability.md.',
    );
    this.complaintRateAlarm = alarm(
      'ComplaintRate',
      rate('Reputation.ComplaintRate'),
      reputationThresholds.complaintRate,
      'The SES account complaint rate reached 0.05% (half of the 0.1% at which AWS places an account under ' +
        'review; at 0.5% it may pause sending). If it keeps rising, SES may stop sending for every account ' +
        'of this service. Find who sends unwanted mail (reason complaint on the suppression list), stop it, ' +
        'see docs/deliverability.md.',
    );
  }
}
