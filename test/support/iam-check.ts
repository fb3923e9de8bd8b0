import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { localAccount, type RecordedRequest } from '../../infra/local/aws-call-recorder.ts';
import { synthService } from './infra.ts';

/**
 * The deployed roles, read from every template of the cloud assembly (top-level stacks and nested
 * ones), with each function found by its construct path (`Route-<id>` / `Worker-<id>`), so the check
 * holds however the app is split into stacks. References are resolved to the local host's names:
 * a resource a function's environment names (`TABLE_NAME: {Ref: …}`) gets the value the host gave
 * that variable, and its ARN follows from it.
 */
type Json = any;

interface TemplateFile {
  file: string;
  template: Json;
  /** For a nested template: its parameters as the parent passes them, resolved. */
  parameters: Record<string, string>;
}

export interface Statement {
  effect: 'Allow' | 'Deny';
  actions: string[];
  resources: string[];
  condition?: Record<string, Record<string, string | string[]>>;
}

export interface FunctionPolicy {
  functionId: string;
  statements: Statement[];
}

const marker = (file: string, logicalId: string, attribute: string) => `«${file}#${logicalId}.${attribute}»`;
const markerPattern = /«([^#»]+)#([^.»]+)\.([^»]+)»/g;

function readAssembly(dir: string): Map<string, Json> {
  const templates = new Map<string, Json>();
  for (const file of readdirSync(dir)) {
    if (file.endsWith('.template.json'))
      templates.set(file, JSON.parse(readFileSync(join(dir, file), 'utf8')));
  }
  return templates;
}

/** Every function's policy in the synthesized app, with ARNs in the names of `hostEnv`. */
export function deployedPolicies(hostEnv: Record<string, string>): FunctionPolicy[] {
  const { app } = synthService({
    context: { 'aws:cdk:enable-asset-metadata': true, 'aws:cdk:enable-path-metadata': true },
  });
  const templates = readAssembly(app.synth().directory);
  const region = hostEnv.AWS_REGION ?? 'us-east-1';
  const exports = new Map<string, string>();
  const files: TemplateFile[] = [];

  // Evaluates an intrinsic to a string in which each resource reference is a marker.
  const evaluate = (value: Json, at: TemplateFile): string => {
    if (typeof value === 'string') return value;
    if (typeof value !== 'object' || value === null) return String(value);
    if ('Ref' in value) {
      const name = value.Ref as string;
      const pseudo: Record<string, string> = {
        'AWS::Region': region,
        'AWS::AccountId': localAccount,
        'AWS::Partition': 'aws',
        'AWS::URLSuffix': 'amazonaws.com',
        'AWS::StackName': 'local',
      };
      if (pseudo[name] !== undefined) return pseudo[name];
      if (at.parameters[name] !== undefined) return at.parameters[name];
      return marker(at.file, name, 'Ref');
    }
    if ('Fn::GetAtt' in value) {
      const [logicalId, attribute] = value['Fn::GetAtt'] as [string, string];
      return marker(at.file, logicalId, attribute);
    }
    if ('Fn::Join' in value) {
      const [separator, parts] = value['Fn::Join'] as [string, Json[]];
      return parts.map((part) => evaluate(part, at)).join(separator);
    }
    if ('Fn::ImportValue' in value) {
      const name = evaluate(value['Fn::ImportValue'], at);
      return exports.get(name) ?? `«import:${name}»`;
    }
    if ('Fn::Select' in value) {
      const [index, list] = value['Fn::Select'] as [number, Json];
      const items = Array.isArray(list)
        ? list.map((item) => evaluate(item, at))
        : evaluate(list, at).split('\u0000');
      return items[Number(index)] ?? '';
    }
    if ('Fn::Split' in value) {
      const [separator, text] = value['Fn::Split'] as [string, Json];
      return evaluate(text, at).split(separator).join('\u0000');
    }
    if ('Fn::Sub' in value) {
      const [text, variables] = (
        Array.isArray(value['Fn::Sub']) ? value['Fn::Sub'] : [value['Fn::Sub'], {}]
      ) as [string, Record<string, Json>];
      return text.replace(/\$\{([^}]+)\}/g, (_, name: string) =>
        variables[name] !== undefined
          ? evaluate(variables[name], at)
          : name.includes('.')
            ? evaluate({ 'Fn::GetAtt': name.split('.') }, at)
            : evaluate({ Ref: name }, at),
      );
    }
    return JSON.stringify(value);
  };

  // Top-level templates first, then each nested one with its parent's parameters.
  const nested = new Set<string>();
  for (const template of templates.values()) {
    for (const resource of Object.values(template.Resources ?? {}) as Json[]) {
      const path = resource.Metadata?.['aws:asset:path'];
      if (resource.Type === 'AWS::CloudFormation::Stack' && typeof path === 'string') nested.add(path);
    }
  }
  const visit = (file: string, parameters: Record<string, string>) => {
    const at: TemplateFile = { file, template: templates.get(file), parameters };
    files.push(at);
    for (const output of Object.values(at.template.Outputs ?? {}) as Json[]) {
      if (output.Export?.Name !== undefined)
        exports.set(evaluate(output.Export.Name, at), evaluate(output.Value, at));
    }
    for (const resource of Object.values(at.template.Resources ?? {}) as Json[]) {
      const path = resource.Metadata?.['aws:asset:path'];
      if (resource.Type !== 'AWS::CloudFormation::Stack' || typeof path !== 'string' || !templates.has(path))
        continue;
      const passed = Object.fromEntries(
        Object.entries(resource.Properties?.Parameters ?? {}).map(([name, value]) => [
          name,
          evaluate(value, at),
        ]),
      );
      visit(path, passed);
    }
  };
  for (const file of templates.keys()) if (!nested.has(file)) visit(file, {});

  // Local values of the resources the functions' environments name, and the ARNs that follow.
  const local = new Map<string, string>();
  const typeOf = (file: string, logicalId: string): string | undefined =>
    templates.get(file)?.Resources?.[logicalId]?.Type;
  const functions: Array<{ id: string; at: TemplateFile; resource: Json }> = [];
  for (const at of files) {
    for (const resource of Object.values(at.template.Resources ?? {}) as Json[]) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const match = /(?:^|\/)(?:Route|Worker)-([a-z0-9-]+)\/Function\/Resource$/.exec(
        resource.Metadata?.['aws:cdk:path'] ?? '',
      );
      if (match === null) continue;
      functions.push({ id: match[1] as string, at, resource });
      for (const [name, value] of Object.entries(resource.Properties?.Environment?.Variables ?? {})) {
        const evaluated = evaluate(value, at);
        const single = /^«[^»]+»$/.test(evaluated);
        if (single && hostEnv[name] !== undefined) local.set(evaluated, hostEnv[name]);
      }
    }
  }
  for (const [reference, value] of [...local]) {
    const [, file, logicalId, attribute] = /«([^#»]+)#([^.»]+)\.([^»]+)»/.exec(reference) as RegExpExecArray;
    const arn = marker(file as string, logicalId as string, 'Arn');
    if (attribute !== 'Ref') continue;
    switch (typeOf(file as string, logicalId as string)) {
      case 'AWS::DynamoDB::Table':
        local.set(arn, `arn:aws:dynamodb:${region}:${localAccount}:table/${value}`);
        break;
      case 'AWS::SQS::Queue':
        local.set(arn, `arn:aws:sqs:${region}:${localAccount}:${value.split('/').pop()}`);
        local.set(marker(file as string, logicalId as string, 'QueueName'), value.split('/').pop() as string);
        break;
      case 'AWS::S3::Bucket':
        local.set(arn, `arn:aws:s3:::${value}`);
        break;
    }
  }
  // A marker no local resource stands for stays in the ARN: such a statement allows nothing here.
  const localize = (text: string) => text.replace(markerPattern, (whole) => local.get(whole) ?? whole);

  return functions.map(({ id, at, resource }) => {
    const role = resource.Properties.Role?.['Fn::GetAtt']?.[0] as string | undefined;
    const policies = (Object.values(at.template.Resources) as Json[]).filter(
      (candidate) =>
        candidate.Type === 'AWS::IAM::Policy' &&
        (candidate.Properties.Roles as Json[]).some((entry) => entry.Ref === role),
    );
    const inline = (at.template.Resources[role as string]?.Properties?.Policies ?? []) as Json[];
    const documents = [
      ...policies.map((policy) => policy.Properties.PolicyDocument),
      ...inline.map((p) => p.PolicyDocument),
    ];
    return {
      functionId: id,
      statements: documents.flatMap((document) =>
        (document.Statement as Json[]).map((statement) => ({
          effect: statement.Effect,
          actions: [statement.Action].flat(),
          resources: [statement.Resource].flat().map((entry: Json) => localize(evaluate(entry, at))),
          ...(statement.Condition === undefined ? {} : { condition: statement.Condition }),
        })),
      ),
    };
  });
}

const wildcard = (pattern: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );

/** The condition operators and keys the stack uses; any other makes the statement not apply. */
function conditionHolds(condition: Statement['condition'], request: RecordedRequest): boolean {
  for (const [operator, keys] of Object.entries(condition ?? {})) {
    for (const [key, expected] of Object.entries(keys)) {
      const patterns = [expected].flat();
      if (operator === 'ForAllValues:StringLike' && key === 'dynamodb:LeadingKeys') {
        const values = request.leadingKeys ?? [];
        if (values.length === 0 || !values.every((value) => patterns.some((p) => wildcard(p).test(value))))
          return false;
        continue;
      }
      return false;
    }
  }
  return true;
}

const matches = (statement: Statement, request: RecordedRequest) =>
  statement.actions.some((action) => wildcard(action).test(request.action)) &&
  statement.resources.some((resource) => wildcard(resource).test(request.resource)) &&
  conditionHolds(statement.condition, request);

/** Whether the function's deployed role allows the request (an explicit Deny wins). */
export function allows(policy: FunctionPolicy, request: RecordedRequest): boolean {
  const applying = policy.statements.filter((statement) => matches(statement, request));
  return applying.some((s) => s.effect === 'Allow') && !applying.some((s) => s.effect === 'Deny');
}

export function readRecordedRequests(file: string): RecordedRequest[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as RecordedRequest);
}

/** Per function, the allowed actions no recorded request used (to tighten least privilege). */
export function unusedActions(
  policies: FunctionPolicy[],
  requests: RecordedRequest[],
): Map<string, string[]> {
  const unused = new Map<string, string[]>();
  for (const policy of policies) {
    const used = new Set(requests.filter((r) => r.function === policy.functionId).map((r) => r.action));
    // Logs and traces are written by the Lambda runtime, not by the function's SDK calls.
    const allowed = new Set(
      policy.statements
        .filter((s) => s.effect === 'Allow')
        .flatMap((statement) => statement.actions)
        .filter((action) => !/^(logs|xray):/.test(action)),
    );
    const never = [...allowed]
      .filter((action) => ![...used].some((done) => wildcard(action).test(done)))
      .sort();
    if (never.length > 0) unused.set(policy.functionId, never);
  }
  return unused;
}
