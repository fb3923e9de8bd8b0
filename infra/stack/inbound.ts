import { Aws, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as ses from 'aws-cdk-lib/aws-ses';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SqsSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { bucketDefinition } from '../resources/definitions.ts';

export interface InboundReceivingProps {
  /** The object bucket: SES stores each received message under `inbound/raw/`. */
  readonly bucket: s3.Bucket;
  /** The inbound function's queue: SES's receipt notifications arrive there (via SNS). */
  readonly queue: sqs.IQueue;
  /** Its dead-letter queue, also where SNS keeps a receipt it could not deliver to the queue. */
  readonly deadLetterQueue: sqs.IQueue;
  /** Context `receiving`: SES receives for the stack. Off: no rule set. */
  readonly receiving: boolean;
}

/** The rule name, fixed so that the bucket and topic policies can name the rule's ARN. */
export const receiptRuleName = 'store-in-s3';

/**
 * Receiving mail on AWS (docs/inbound.md): an SES receipt rule set with one rule without a recipient
 * list, so SES applies it to every domain it verified in the account and region and no domain is
 * named at deploy time (mail to unverified domains is refused at SMTP time; which verified domain
 * receives is the table's `receiving` switch, read by the inbound function for every message),
 * spam and virus scanning on, whose S3 action stores the message under `inbound/raw/` and then
 * publishes SES's receipt notification to a topic; the topic delivers it raw to the inbound queue,
 * which the inbound function consumes. SES may write to the bucket and publish to the topic only
 * for this rule of this account (`aws:SourceAccount` and `aws:SourceArn`). CloudFormation cannot
 * activate a rule set, so a custom resource does (SES allows one active set per account and region:
 * deploying this stack replaces another active set there; deleting it deactivates receiving).
 */
export class InboundReceiving extends Construct {
  readonly topic: sns.Topic;
  readonly ruleSet: ses.ReceiptRuleSet | undefined;
  readonly rule: ses.ReceiptRule | undefined;
  readonly activation: cr.AwsCustomResource | undefined;

  constructor(scope: Construct, id: string, props: InboundReceivingProps) {
    super(scope, id);
    const ruleSetName = `${Stack.of(this).stackName}-inbound`;
    const ruleArn = `arn:${Aws.PARTITION}:ses:${Aws.REGION}:${Aws.ACCOUNT_ID}:receipt-rule-set/${ruleSetName}:receipt-rule/${receiptRuleName}`;
    const onlyThisRule = { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID, 'aws:SourceArn': ruleArn } };

    this.topic = new sns.Topic(this, 'ReceiptTopic', {
      displayName: 'SES receipts of stored inbound mail',
      enforceSSL: true,
    });
    this.topic.addSubscription(
      new SqsSubscription(props.queue, { rawMessageDelivery: true, deadLetterQueue: props.deadLetterQueue }),
    );
    const topicPolicy = this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowSesReceiptRuleToPublish',
        principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: onlyThisRule,
      }),
    );
    if (!props.receiving) {
      this.ruleSet = undefined;
      this.rule = undefined;
      this.activation = undefined;
      return;
    }

    const bucketPolicy = props.bucket.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'AllowSesReceiptRuleToStoreMail',
        principals: [new iam.ServicePrincipal('ses.amazonaws.com')],
        actions: ['s3:PutObject'],
        resources: [props.bucket.arnForObjects(`${bucketDefinition.inboundRawPrefix}*`)],
        conditions: onlyThisRule,
      }),
    );
    this.ruleSet = new ses.ReceiptRuleSet(this, 'RuleSet', { receiptRuleSetName: ruleSetName });
    const bucketName = props.bucket.bucketName;
    const topicArn = this.topic.topicArn;
    this.rule = this.ruleSet.addRule('StoreInBucket', {
      receiptRuleName,
      // No recipients: every verified domain of the account and region (adding one needs no deploy).
      scanEnabled: true,
      tlsPolicy: ses.TlsPolicy.OPTIONAL,
      actions: [
        {
          bind: () => ({
            s3Action: { bucketName, objectKeyPrefix: bucketDefinition.inboundRawPrefix, topicArn },
          }),
        },
      ],
    });
    // SES checks at creation that it may write and publish: the policies first.
    if (bucketPolicy.policyDependable !== undefined)
      this.rule.node.addDependency(bucketPolicy.policyDependable);
    if (topicPolicy.policyDependable !== undefined)
      this.rule.node.addDependency(topicPolicy.policyDependable);

    const activate: cr.AwsSdkCall = {
      service: 'SES',
      action: 'SetActiveReceiptRuleSet',
      parameters: { RuleSetName: ruleSetName },
      physicalResourceId: cr.PhysicalResourceId.of(`${ruleSetName}-active`),
    };
    this.activation = new cr.AwsCustomResource(this, 'ActivateRuleSet', {
      resourceType: 'Custom::SesActiveReceiptRuleSet',
      onCreate: activate,
      onUpdate: activate,
      // Without a name, SES deactivates receiving: no rule set of a deleted stack stays active.
      onDelete: {
        service: 'SES',
        action: 'SetActiveReceiptRuleSet',
        parameters: {},
        physicalResourceId: cr.PhysicalResourceId.of(`${ruleSetName}-active`),
      },
      installLatestAwsSdk: false,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          sid: 'ActivateSesReceiptRuleSet',
          actions: ['ses:SetActiveReceiptRuleSet'],
          // The action has no resource-level permissions.
          resources: ['*'],
        }),
      ]),
    });
    this.activation.node.addDependency(this.rule);
  }
}
