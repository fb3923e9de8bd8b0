import { Validations } from 'aws-cdk-lib';
import type { CfnBucket } from 'aws-cdk-lib/aws-s3';
import { AwsCustomResource } from 'aws-cdk-lib/custom-resources';
import type { IConstruct } from 'constructs';
import type { ServiceConfig } from '../config.ts';
import { type AccessNeeds, type FunctionId, functionAccess } from './function-access.ts';
import type { MailServiceStack } from './service-stack.ts';

export interface Acknowledgement {
  /** cdk-nag rule, with the finding in brackets where the rule reports several per resource. */
  readonly rule: string;
  /** Construct path of the resource (or subtree) the acknowledgement covers. */
  readonly resource: string;
  readonly reason: string;
}

/**
 * The cdk-nag (AwsSolutions) findings this design accepts, each with the rule, the resource it
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

  const bucketId = stack.getLogicalId(stack.storage.bucket.node.defaultChild as CfnBucket);
  for (const [id, fn] of stack.functions) {
    acknowledge(
      fn.function,
      'AwsSolutions-L1',
      'Node.js 22 is the runtime this project pins and tests on (DESIGN: nodejs22.x everywhere); a newer ' +
        'runtime is an explicit upgrade, not a silent one.',
    );
    const needs: AccessNeeds = functionAccess[id as FunctionId];
    for (const prefix of Object.keys(needs.objects ?? {})) {
      acknowledge(
        fn.role,
        `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
        `Object keys are per message or avatar (${prefix}<id>/…), created at run time; access is limited to ` +
          `the ${prefix} prefix with only the actions listed in infra/stack/function-access.ts.`,
      );
    }
  }
  // The custom resource that turns on SES's account-level suppression (infra/stack/reputation.ts).
  acknowledge(
    stack.reputation.accountSuppression,
    'AwsSolutions-IAM5[Resource::*]',
    'ses:PutAccountSuppressionAttributes is an account setting with no resource-level permissions, so its ' +
      'only possible resource is "*"; the policy allows that single action and nothing else.',
  );
  const provider = stack.node.tryFindChild(
    `AWS${AwsCustomResource.PROVIDER_FUNCTION_UUID.replace(/-/g, '')}`,
  );
  if (provider !== undefined) {
    acknowledge(
      provider,
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      "CDK's AwsCustomResource provider (a deploy-time function that runs only on stack create and update) " +
        'writes its own logs with this AWS managed policy; its SES permission is the separate inline policy above.',
    );
  }
  return acknowledged;
}
