import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  type App,
  CloudFormationValidatePlugin,
  type IPolicyValidationContext,
  NestedStack,
  type PolicyValidationPluginReport,
  type PolicyValidationStack,
  Stack,
} from 'aws-cdk-lib';

/**
 * CDK's CloudFormation validation (every resource's properties against the CloudFormation resource
 * schemas: patterns, lengths, enums, required properties), extended to the nested stacks' templates,
 * which CDK's own pass does not read: it validates the cloud assembly's stacks only. cdk.json sets
 * `@aws-cdk/core:validateAgainstDefaultRules`, so every finding fails `cdk synth`.
 */
export class TemplateValidation extends CloudFormationValidatePlugin {
  override validate(context: IPolicyValidationContext): PolicyValidationPluginReport {
    const nested = nestedTemplatesOf(context);
    return super.validate({
      appConstruct: context.appConstruct,
      accountId: context.accountId,
      region: context.region,
      templatePaths: [...context.templatePaths, ...nested.map((stack) => stack.templatePath)],
      stackTemplates: [...context.stackTemplates, ...nested],
    });
  }
}

function nestedTemplatesOf(context: IPolicyValidationContext): PolicyValidationStack[] {
  const directories = [...new Set(context.templatePaths.map((path) => dirname(path)))];
  const result: PolicyValidationStack[] = [];
  for (const nested of context.appConstruct.node.findAll().filter(NestedStack.isNestedStack)) {
    const templatePath = directories
      .map((directory) => join(directory, nested.templateFile))
      .find((path) => existsSync(path));
    if (templatePath === undefined)
      throw new Error(`nested stack ${nested.node.path}: template ${nested.templateFile} not found`);
    // The account and region CDK validates the top-level stack with (none for an environment-agnostic one).
    const root = Stack.of(nested.nestedStackParent as Stack);
    const parent = context.stackTemplates.find((stack) => stack.stackConstructPath === root.node.path);
    result.push({
      stackConstructPath: nested.node.path,
      templatePath,
      accountId: parent?.accountId,
      region: parent?.region,
    });
  }
  return result;
}

/** Whether the app runs CloudFormation validation at synth (CDK's default; tests turn it off for speed). */
export function validatesTemplates(app: App): boolean {
  return app._builtinCloudFormationValidation && process.env.CDK_VALIDATION !== 'false';
}
