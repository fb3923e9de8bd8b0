import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { ensureConsoleBuilt } from '../console/build.ts';
import { readConfig } from './config.ts';
import { MailServiceStack } from './stack/service-stack.ts';
import { TemplateValidation, validatesTemplates } from './template-validation.ts';

/**
 * The CDK app (`cdk.json` runs it): one environment-agnostic stack with nested stacks
 * (infra/stack/stack-parts.ts), configured from context, checked by cdk-nag's AWS Solutions and
 * Serverless rules and against the CloudFormation resource schemas on every synth.
 */
export function buildApp(app: App = new App()): { app: App; stack: MailServiceStack } {
  const config = readConfig((key) => app.node.tryGetContext(key));
  const stack = new MailServiceStack(app, app.node.tryGetContext('stackName') ?? 'SvcMail', {
    config,
    description: 'svc-mail: transactional e-mail API (API Gateway, Lambda, DynamoDB, SQS, S3, SES)',
  });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  // CDK's schema validation, nested stacks included; a finding is an error (cdk.json's
  // @aws-cdk/core:validateAgainstDefaultRules), so a template CloudFormation would refuse never deploys.
  if (validatesTemplates(app)) Validations.of(app).addPlugins(new TemplateValidation());
  return { app, stack };
}

if (import.meta.main) {
  try {
    // The stack deploys the built console (console/dist): a checkout whose sources changed is rebuilt.
    await ensureConsoleBuilt((line) => process.stderr.write(`${line}\n`));
    buildApp().app.synth();
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
