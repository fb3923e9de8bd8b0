import { type CfnResource, Names, Stack, Validations } from 'aws-cdk-lib';
import { CfnEventSourceMapping } from 'aws-cdk-lib/aws-lambda';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { AwsCustomResource } from 'aws-cdk-lib/custom-resources';
import type { IConstruct } from 'constructs';
import type { AccessNeeds } from '../../shared/platform/access.ts';
import { type FunctionId, scheduledRoutes, workers } from '../../shared/workers.ts';
import type { ServiceConfig } from '../config.ts';
import { functionAccess } from './function-access.ts';
import type { MailServiceStack } from './service-stack.ts';
import type { SmtpSubmission } from './smtp-submission.ts';

export interface Acknowledgement {
  /** cdk-nag rule, with the finding in brackets where the rule reports several per resource. */
  readonly rule: string;
  /** Construct path of the resource (or subtree) the acknowledgement covers. */
  readonly resource: string;
  readonly reason: string;
}

/**
 * The cdk-nag (AwsSolutions and Serverless packs) findings this design accepts, each with the rule, the resource it
 * applies to and the reason. Everything else must pass: the infra test fails on any other finding.
 */
export function acknowledgeFindings(stack: MailServiceStack, _config: ServiceConfig): Acknowledgement[] {
  const acknowledged: Acknowledgement[] = [];
  const acknowledge = (scope: IConstruct, rule: string, reason: string) => {
    Validations.of(scope).acknowledge({ id: rule, reason });
    acknowledged.push({ rule, resource: scope.node.path, reason });
  };

  const api = stack.api.api;
  acknowledge(
    stack.linkKey,
    'AwsSolutions-SMG4',
    'The link key seals the tokens of links in mail already sent (one-click unsubscribe must keep working ' +
      'for months): an automatic rotation would break them. The first byte of a token names its version, which leaves room for a rotation ' +
      'that keeps older links working (docs/streams.md).',
  );
  acknowledge(
    api,
    'AwsSolutions-APIG4',
    'Authentication is done in each function by the shared chain (JWT from the configured OpenID provider, ' +
      'verified against its JWKS), so failures answer in the service envelope with codes 104/105/110/113; ' +
      'public routes and the MOCK OPTIONS/ANY methods need none.',
  );
  acknowledge(
    api,
    'AwsSolutions-COG4',
    'The identity provider is any OpenID Connect issuer (context authIssuer), not necessarily Cognito; ' +
      'tokens are verified in the functions (see APIG4).',
  );
  acknowledge(
    api,
    'AwsSolutions-APIG2',
    'Requests are validated in the functions by the zod schemas that also generate the OpenAPI document, ' +
      'answering 107 / 10000001 with field details; a gateway validator would answer in its own format.',
  );
  const cloudWatchRole = api.node.tryFindChild('CloudWatchRole');
  if (cloudWatchRole !== undefined) {
    acknowledge(
      cloudWatchRole,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'The account-level role API Gateway needs to write access and execution logs; AWS documents this ' +
        'managed policy for exactly that role.',
    );
  }

  // Serverless pack, and what its fixes brought.
  for (const queue of [
    stack.storage.deadLetterQueue,
    stack.storage.eventsDeadLetterQueue,
    stack.storage.webhookDeadLetterQueue,
    stack.storage.streamFailureQueue,
    stack.storage.inboundDeadLetterQueue,
  ]) {
    acknowledge(
      queue,
      'Serverless-SQSRedrivePolicy',
      'This queue is itself a dead-letter queue (of the send queue, the webhook queue, the SES events rule ' +
        'and delivery-events, the table-stream mapping, or the inbound queue and its SNS subscription); a ' +
        'redrive policy would only move its messages further away.',
    );
  }
  acknowledge(
    stack.storage.eventsDeadLetterQueue,
    'AwsSolutions-SQS3',
    'This queue is the dead-letter queue of the SES events rule target and the on-failure destination of ' +
      'delivery-events; cdk-nag only recognizes a dead-letter queue when another queue redrives to it.',
  );
  const scheduled = new Set<string>([
    ...scheduledRoutes.map((entry) => entry.routeId),
    ...workers.filter((worker) => worker.trigger === 'schedule').map((worker) => worker.id),
  ]);
  for (const id of scheduled) {
    const rule = Stack.of(stack.functionById(id as FunctionId)).node.tryFindChild(`Schedule-${id}`);
    if (rule === undefined) continue;
    acknowledge(
      rule,
      'Serverless-EventBusDLQ',
      `A scheduled run of ${id} that EventBridge cannot deliver carries no data to keep: the next run does the ` +
        'same work (the dispatcher every minute from the due index, keepalive from its saved cursor).',
    );
  }
  const queueWorkers = new Set<string>(
    workers.filter((worker) => worker.trigger.endsWith('queue')).map((worker) => worker.id),
  );
  const lambdaDlqReason = (id: string): string => {
    if (queueWorkers.has(id))
      return 'Invoked synchronously by its SQS event source mapping: a failed record goes back to the queue and, after maxReceiveCount, to its dead-letter queue, which is alarmed on receipts and depth.';
    if (id === 'delivery-events')
      return 'Has an on-failure destination instead (the events dead-letter queue, alarmed on depth), which keeps the failed event with its error context, unlike a Lambda DLQ.';
    if (scheduled.has(id))
      return 'Only its scheduled runs are asynchronous, and a failed one is repeated by the next run (the dispatcher from the due index, keepalive from its saved cursor); HTTP calls are synchronous.';
    return 'Invoked synchronously by API Gateway only: the caller receives the error response and retries; there is no asynchronous event that a dead-letter queue could keep.';
  };
  acknowledge(
    stack.storage.streamFailureQueue,
    'AwsSolutions-SQS3',
    'This queue is itself a dead-letter destination: the on-failure destination of the table-stream ' +
      'mapping of webhook-fanout (records it gave up on). An alarm fires on its first message.',
  );
  acknowledge(
    stack.functionById('webhook-fanout').role,
    'AwsSolutions-IAM5[Resource::*]',
    'dynamodb:ListStreams, which the Lambda event source mapping of the table stream needs, has no ' +
      'resource-level permissions (AWS service authorization reference); the stream read actions are ' +
      'limited to the table stream ARN.',
  );

  const bucket = stack.storage.bucket.node.defaultChild as CfnBucket;
  for (const [id, fn] of stack.functions) {
    const bucketArn = arnAsNagShowsIt(fn, bucket);
    acknowledge(
      fn.function,
      'AwsSolutions-L1',
      'Node.js 22 is the runtime this project pins and tests on (nodejs22.x for every function); a newer ' +
        'runtime is an explicit upgrade, not a silent one.',
    );
    acknowledge(
      fn.function,
      'Serverless-LambdaLatestVersion',
      'Node.js 22 is the runtime this project pins and tests on; a newer runtime is an explicit upgrade, ' +
        'not a silent one (same as AwsSolutions-L1).',
    );
    acknowledge(fn.function, 'Serverless-LambdaDLQ', lambdaDlqReason(id));
    acknowledge(
      fn.role,
      'AwsSolutions-IAM5[Resource::*]',
      'Active X-Ray tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no ' +
        'resource-level permissions (AWS documents Resource "*" for them); no other action has a wildcard.',
    );
    const sqsMappings = fn.function.node
      .findAll()
      .filter((c) => c instanceof CfnEventSourceMapping && c.node.path.includes('/SqsEventSource:'));
    for (const mapping of sqsMappings) {
      acknowledge(
        mapping,
        'Serverless-LambdaEventSourceMappingDestination',
        'SQS event source mappings support no on-failure destination; a failed record returns to its queue ' +
          'and the queue redrive policy moves it to the dead-letter queue after maxReceiveCount receipts.',
      );
    }
    const needs: AccessNeeds = functionAccess[id as FunctionId];
    if (needs.mail === true && _config.mailTransport === 'ses') {
      acknowledge(
        fn.role,
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
        'Accounts add their own sending domains through the API, so the identities the sender sends as are ' +
          'named at run time; it sends only through the stack’s configuration set, and the service checks ' +
          'that the account holds the domain before any mail is queued.',
      );
    }
    if (needs.sesIdentities === true && _config.mailTransport === 'ses') {
      acknowledge(
        fn.role,
        'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/*]',
        'Accounts add their own sending domains through the API, so the SES identities are named at run ' +
          'time; the policy allows only creating, reading and deleting identities and setting their MAIL FROM and BYODKIM key.',
      );
    }
    for (const prefix of Object.keys(needs.objects ?? {})) {
      acknowledge(
        fn.role,
        `AwsSolutions-IAM5[Resource::${bucketArn}/${prefix}*]`,
        `Object keys are per message or avatar (${prefix}<id>/…), created at run time; access is limited to ` +
          `the ${prefix} prefix with only the actions its declaration lists (access, in its wing's routes.ts or workers.ts).`,
      );
    }
  }
  // The custom resource that turns on SES's account-level suppression (infra/stack/reputation.ts),
  // present only with context sesAccountSuppression=true.
  if (stack.reputation.accountSuppression !== undefined) {
    acknowledge(
      stack.reputation.accountSuppression,
      'AwsSolutions-IAM5[Resource::*]',
      'ses:PutAccountSuppressionAttributes is an account setting with no resource-level permissions, so its ' +
        'only possible resource is "*"; the policy allows that single action and nothing else.',
    );
  }
  // The custom resource that activates the inbound receipt rule set (infra/stack/inbound.ts).
  if (stack.inbound.activation !== undefined) {
    acknowledge(
      stack.inbound.activation,
      'AwsSolutions-IAM5[Resource::*]',
      'ses:SetActiveReceiptRuleSet is an account setting with no resource-level permissions, so its only ' +
        'possible resource is "*"; the policy allows that single action and nothing else.',
    );
  }
  if (stack.smtpSubmission !== undefined) acknowledgeSubmission(stack.smtpSubmission, acknowledge);
  // CDK's AwsCustomResource provider, one per stack that holds a custom resource.
  const submissionPart = stack.smtpSubmission?.node.scope;
  for (const home of submissionPart === undefined ? [stack] : [stack, submissionPart]) {
    const provider = home.node.tryFindChild(
      `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`,
    );
    if (provider === undefined) continue;
    acknowledge(
      provider,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's AwsCustomResource provider (a deploy-time function that runs only on stack create and update) " +
        'writes its own logs with this AWS managed policy; its SES or Secrets Manager permission is a separate inline policy.',
    );
    const deployTime =
      "CDK's AwsCustomResource provider runs only while CloudFormation creates or updates the stack, and CDK " +
      'sets its function up; ';
    acknowledge(
      provider,
      'Serverless-LambdaDefaultMemorySize',
      `${deployTime}its one API call per deployment needs no tuning of the default memory.`,
    );
    acknowledge(
      provider,
      'Serverless-LambdaDLQ',
      `${deployTime}a failed call fails the deployment itself, which CloudFormation reports and rolls back.`,
    );
    acknowledge(
      provider,
      'Serverless-LambdaTracing',
      `${deployTime}it serves no request of the service, so there is nothing to trace; its logs show each call.`,
    );
  }
  acknowledgeConsole(stack, acknowledge);
  return acknowledged;
}

/** The SMTP submission host on Fargate behind an NLB (infra/stack/smtp-submission.ts). */
function acknowledgeSubmission(
  submission: SmtpSubmission,
  acknowledge: (scope: IConstruct, rule: string, reason: string) => void,
): void {
  acknowledge(
    submission.service.cluster,
    'AwsSolutions-ECS4',
    'Container Insights bills per task metric at rest; the tasks write their own embedded metrics (connections, ' +
      'messages, rejections by reason) and the NLB reports flows and healthy hosts, which scaling and alarms use.',
  );
  acknowledge(
    submission.service.taskDefinition,
    'AwsSolutions-ECS2',
    'The one environment variable is API_URL, the public address of the API the server is a client of; the ' +
      'certificate and its key come from Secrets Manager as ECS secrets.',
  );
  acknowledge(
    submission.service.taskDefinition.obtainExecutionRole(),
    'AwsSolutions-IAM5[Resource::*]',
    'ecr:GetAuthorizationToken has no resource-level permissions, so its only possible resource is "*"; the ' +
      "execution role pulls the image from CDK's asset repository and reads the one certificate secret.",
  );
  acknowledge(
    submission.service,
    'AwsSolutions-EC23',
    'A public SMTP submission port: mailers connect from anywhere and authenticate with an API key after TLS; ' +
      "the NLB keeps the client's address, so the task's security group must admit every address.",
  );
  acknowledge(
    submission.loadBalancer,
    'AwsSolutions-ELB2',
    'A TCP pass-through balancer: its access logs would hold only TLS handshakes, while the tasks log every ' +
      'session outcome; the logs would add a bucket and its costs at rest.',
  );
}

/**
 * How cdk-nag names a resource's ARN in a finding, seen from `scope`: `<LogicalId.Arn>` in the
 * resource's own stack, and the parameter CDK passes it through (`reference-to-<unique id>Arn`)
 * in a nested stack.
 */
function arnAsNagShowsIt(scope: IConstruct, resource: CfnResource): string {
  const home = Stack.of(resource);
  if (Stack.of(scope) === home) return `<${home.getLogicalId(resource)}.Arn>`;
  return `<${`reference-to-${Names.nodeUniqueId(resource.node)}Arn`.replace(/[^A-Za-z0-9]/g, '')}>`;
}

/** The web console's distribution, and CDK's BucketDeployment function that copies its files. */
function acknowledgeConsole(
  stack: MailServiceStack,
  acknowledge: (scope: IConstruct, rule: string, reason: string) => void,
): void {
  const distribution = stack.console.distribution;
  acknowledge(
    distribution,
    'AwsSolutions-CFR1',
    "The console is a static page for an account's operators wherever they work; who may act is decided " +
      'by the OpenID sign-in and the API, not by the country a request comes from.',
  );
  acknowledge(
    distribution,
    'AwsSolutions-CFR2',
    'The distribution serves only static files (the built console and a config.json without secrets); every ' +
      'request that reads or changes data goes to the API, which has the stack WAF. A CloudFront web ACL ' +
      'must be created in us-east-1, which this region-agnostic stack does not do.',
  );
  if (stack.console.customDomain === false) {
    acknowledge(
      distribution,
      'AwsSolutions-CFR4',
      'Without consoleDomainName the distribution uses the default *.cloudfront.net certificate, for which ' +
        'CloudFront fixes the minimum protocol; with consoleDomainName and consoleCertificateArn the stack ' +
        'sets TLSv1.2_2021 (docs/deploy.md).',
    );
  }
  const deployer = stack.node.children.find((child) =>
    child.node.id.startsWith('Custom::CDKBucketDeployment'),
  );
  if (deployer === undefined) return;
  const deployTime =
    "CDK's BucketDeployment function runs only while CloudFormation creates or updates the stack (it copies " +
    'the built console into its bucket), and CDK sets it up; ';
  acknowledge(
    deployer,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    `${deployTime}it writes its logs with this AWS managed policy.`,
  );
  for (const finding of [
    'Action::s3:GetObject*',
    'Action::s3:GetBucket*',
    'Action::s3:List*',
    'Action::s3:DeleteObject*',
    'Action::s3:Abort*',
    'Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-<AWS::AccountId>-<AWS::Region>/*',
    `Resource::<${stack.getLogicalId(stack.console.bucket.node.defaultChild as CfnBucket)}.Arn>/*`,
  ]) {
    acknowledge(
      deployer,
      `AwsSolutions-IAM5[${finding}]`,
      `${deployTime}CDK grants it read on the deployment's asset objects and read-write on the console bucket ` +
        'only (its grant methods use these action groups); it touches no other bucket.',
    );
  }
  acknowledge(
    deployer,
    'AwsSolutions-IAM5[Resource::*]',
    `${deployTime}it invalidates the console's page at CloudFront after each copy; CDK grants ` +
      'cloudfront:CreateInvalidation and GetInvalidation on "*".',
  );
  acknowledge(
    deployer,
    'AwsSolutions-L1',
    `${deployTime}its runtime is the one CDK bundles with the construct and moves forward with CDK upgrades.`,
  );
  acknowledge(
    deployer,
    'Serverless-LambdaLatestVersion',
    `${deployTime}its runtime is the one CDK bundles with the construct (same as AwsSolutions-L1).`,
  );
  acknowledge(
    deployer,
    'Serverless-LambdaDLQ',
    `${deployTime}a failed copy fails the deployment itself, which CloudFormation reports and rolls back.`,
  );
  acknowledge(
    deployer,
    'Serverless-LambdaTracing',
    `${deployTime}it serves no request of the service, so there is nothing to trace; its log group keeps each run.`,
  );
}
