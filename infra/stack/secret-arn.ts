import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';

/**
 * The complete ARN of a Secrets Manager secret given by name or by complete ARN. ECS reads a JSON
 * key of a secret only through its complete ARN (with the suffix Secrets Manager adds), which a
 * name does not give: a deploy-time DescribeSecret looks it up.
 */
export class CompleteSecretArn extends Construct {
  readonly arn: string;
  /** The lookup, when the reference was a name (for the nag acknowledgements). */
  readonly lookup: cr.AwsCustomResource | undefined;

  constructor(scope: Construct, id: string, reference: string) {
    super(scope, id);
    if (reference.startsWith('arn:')) {
      this.arn = reference;
      this.lookup = undefined;
      return;
    }
    const describe: cr.AwsSdkCall = {
      service: 'SecretsManager',
      action: 'DescribeSecret',
      parameters: { SecretId: reference },
      physicalResourceId: cr.PhysicalResourceId.fromResponse('ARN'),
      outputPaths: ['ARN'],
    };
    this.lookup = new cr.AwsCustomResource(this, 'Lookup', {
      resourceType: 'Custom::SecretCompleteArn',
      onCreate: describe,
      onUpdate: describe,
      installLatestAwsSdk: false,
      policy: cr.AwsCustomResourcePolicy.fromStatements([
        new iam.PolicyStatement({
          sid: 'DescribeTheNamedSecret',
          actions: ['secretsmanager:DescribeSecret'],
          // Any suffix Secrets Manager gave the secret of this name.
          resources: [
            Stack.of(this).formatArn({
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: `${reference}-??????`,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
        }),
      ]),
    });
    this.arn = this.lookup.getResponseField('ARN');
  }
}
