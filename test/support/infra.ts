import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { buildApp } from '../../infra/app.ts';
import type { MailServiceStack } from '../../infra/stack/service-stack.ts';

const projectRoot = join(import.meta.dirname, '..', '..');

/** The context a fresh clone synthesizes with: cdk.json's "context" block. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
}

export interface SynthOptions {
  /** Context on top of cdk.json's (as `-c name=value` would give). */
  context?: Record<string, unknown>;
  /** Run esbuild for every function (slow); off by default, the template is the same. */
  bundle?: boolean;
  /** Run CDK's built-in CloudFormation validation (about 10 s); off by default. cdk-nag always runs. */
  cloudFormationValidation?: boolean;
}

export interface Synthesized {
  app: App;
  stack: MailServiceStack;
  /** The whole deployment as one template: the stack and its nested stacks (see flattenTemplate). */
  template: Template;
  /** Each template CloudFormation receives, by construct path: the stack's and every nested stack's. */
  templates: Map<string, Record<string, any>>;
}

/**
 * Builds the app exactly as `cdk synth` does (infra/app.ts, cdk-nag included) and returns its
 * template. Without `bundle`, CDK's own switch `aws:cdk:bundling-stacks` skips esbuild, which
 * keeps a synth under a few seconds; entries must still exist.
 */
export function synthService(options: SynthOptions = {}): Synthesized {
  const context: Record<string, unknown> = { ...cdkJsonContext(), ...options.context };
  if (options.bundle !== true) context['aws:cdk:bundling-stacks'] = [];
  // As the CLI does: record each asset's directory in the template metadata.
  else context['aws:cdk:enable-asset-metadata'] = true;
  const { app, stack } = buildApp(
    new App({ context, builtinCloudFormationValidation: options.cloudFormationValidation === true }),
  );
  const templates = new Map<string, Record<string, any>>();
  for (const part of [stack, ...nestedStacksOf(stack)])
    templates.set(part.node.path, Template.fromStack(part).toJSON());
  return { app, stack, template: flattenTemplate(stack, templates), templates };
}

function nestedStacksOf(stack: Stack): NestedStack[] {
  return stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c));
}

/**
 * The stack and its nested stacks as one template, as if it were one stack: every resource keeps
 * its logical id, a nested stack's parameter becomes the value the parent passes, and a parent's
 * `Fn::GetAtt [<nested stack>, Outputs.X]` becomes the nested output's value. Assertions about a
 * function's role, environment or event source then read the same wherever the function lives.
 */
function flattenTemplate(stack: Stack, templates: Map<string, Record<string, any>>): Template {
  const root = structuredClone(templates.get(stack.node.path) as Record<string, any>);
  const outputsByResource = new Map<string, Record<string, any>>();
  const resources: Record<string, any> = { ...root.Resources };
  for (const nested of nestedStacksOf(stack)) {
    const resourceId = stack.resolve(
      (nested.nestedStackResource as { logicalId: string }).logicalId,
    ) as string;
    const parentOf = nested.nestedStackParent as Stack;
    const parentResource = parentOf === stack ? root.Resources[resourceId] : undefined;
    if (parentResource === undefined)
      throw new Error(`nested stack ${nested.node.path}: only one level is flattened`);
    const json = templates.get(nested.node.path) as Record<string, any>;
    const parameters = (parentResource.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const substituted = substitute(json, (node) =>
      typeof node.Ref === 'string' && node.Ref in parameters ? parameters[node.Ref] : undefined,
    );
    outputsByResource.set(resourceId, substituted.Outputs ?? {});
    for (const [id, resource] of Object.entries(substituted.Resources ?? {})) {
      if (id in resources) throw new Error(`logical id ${id} is in two stacks; cannot flatten`);
      resources[id] = resource;
    }
    delete resources[resourceId];
  }
  const nestedOutput = (node: Record<string, any>): unknown => {
    const getAtt = node['Fn::GetAtt'];
    if (!Array.isArray(getAtt) || typeof getAtt[1] !== 'string' || !getAtt[1].startsWith('Outputs.'))
      return undefined;
    const outputs = outputsByResource.get(getAtt[0] as string);
    return outputs?.[getAtt[1].slice('Outputs.'.length)]?.Value;
  };
  // Outputs may pass through another nested stack's parameters: resolve until nothing changes.
  let flat: Record<string, any> = { ...root, Resources: resources };
  for (let round = 0; round < 5; round++) flat = substitute(flat, nestedOutput);
  return Template.fromJSON(flat);
}

function substitute<T>(value: T, replace: (node: Record<string, any>) => unknown): T {
  if (Array.isArray(value)) return value.map((item) => substitute(item, replace)) as T;
  if (value === null || typeof value !== 'object') return value;
  const replaced = replace(value as Record<string, any>);
  if (replaced !== undefined) return substitute(replaced as T, replace);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, substitute(item, replace)]),
  ) as T;
}

type Resource = { Type: string; Properties: Record<string, any>; [key: string]: any };

export function resourcesOfType(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

/** Logical id of the Lambda function created for a route or worker (construct Route-<id> / Worker-<id>). */
export function functionLogicalId(template: Template, functionId: string): string {
  const prefix = new RegExp(`^(Route|Worker)${functionId.replace(/-/g, '')}Function[0-9A-F]{8}$`);
  const ids = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) => prefix.test(id));
  if (ids.length !== 1)
    throw new Error(`expected one function for ${functionId}, found ${ids.join(', ') || 'none'}`);
  return ids[0] as string;
}

/** Every IAM statement attached to the role of the given function. */
export function statementsOf(template: Template, functionId: string): Array<Record<string, any>> {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[
    functionLogicalId(template, functionId)
  ] as Resource;
  const roleId = fn.Properties.Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(resourcesOfType(template, 'AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as Array<{ Ref: string }>).some((role) => role.Ref === roleId),
  );
  const role = resourcesOfType(template, 'AWS::IAM::Role')[roleId] as Resource;
  if ((role.Properties.ManagedPolicyArns ?? []).length > 0)
    throw new Error(`${functionId} has managed policies`);
  return policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
}

export function actionsOf(statement: Record<string, any>): string[] {
  return ([] as string[]).concat(statement.Action);
}

/** Actions of the function's statements, optionally only those whose resource mentions `resourceText`. */
export function allowedActions(template: Template, functionId: string, resourceText?: string): Set<string> {
  const result = new Set<string>();
  for (const statement of statementsOf(template, functionId)) {
    if (statement.Effect !== 'Allow') continue;
    if (resourceText !== undefined && !JSON.stringify(statement.Resource).includes(resourceText)) continue;
    for (const action of actionsOf(statement)) result.add(action);
  }
  return result;
}

export function environmentOf(template: Template, functionId: string): Record<string, unknown> {
  const fn = resourcesOfType(template, 'AWS::Lambda::Function')[
    functionLogicalId(template, functionId)
  ] as Resource;
  return fn.Properties.Environment?.Variables ?? {};
}
