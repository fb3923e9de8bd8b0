import assert from 'node:assert/strict';
import { App, NestedStack, Stack, Validations } from 'aws-cdk-lib';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { describe, it } from 'vitest';
import { TemplateValidation } from '../../infra/template-validation.ts';
import { cdkJsonContext, functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

// CloudFormation's per-template quotas (the resource limit is 500; this project keeps 100 spare).
const limits = { resources: 400, outputs: 200, parameters: 200, bytes: 1_000_000 };
const consumers = {
  senderConcurrency: 7,
  deadLetterConcurrency: 3,
  inboundConcurrency: 4,
  webhookConcurrency: 9,
};
const { app, template, templates } = synthService({
  context: {
    ...Object.fromEntries(Object.entries(consumers).map(([k, v]) => [k, String(v)])),
    receiving: 'true',
  },
});

describe('stacks and CloudFormation limits', () => {
  it('is one deployable stack (`cdk deploy`), whose parts are nested stacks', () => {
    assert.deepEqual(
      app.synth().stacks.map((stack) => stack.stackName),
      ['SvcMail'],
    );
    assert.ok(templates.size >= 3, `expected nested stacks, got ${[...templates.keys()].join(', ')}`);
  });

  for (const [path, json] of templates) {
    it(`${path}: under ${limits.resources} resources, ${limits.outputs} outputs, ${limits.parameters} parameters and 1 MB`, () => {
      const count = (section: string) => Object.keys(json[section] ?? {}).length;
      const bytes = Buffer.byteLength(JSON.stringify(json));
      process.stdout.write(
        `# ${path}: ${count('Resources')} resources, ${count('Outputs')} outputs, ${count('Parameters')} parameters, ${Math.round(bytes / 1024)} KiB\n`,
      );
      assert.ok(count('Resources') <= limits.resources, `${count('Resources')} resources`);
      assert.ok(count('Outputs') <= limits.outputs, `${count('Outputs')} outputs`);
      assert.ok(count('Parameters') <= limits.parameters, `${count('Parameters')} parameters`);
      assert.ok(bytes <= limits.bytes, `${bytes} bytes`);
    });
  }

  it('the outputs the README names stay on the stack itself', () => {
    const outputs = Object.keys(templates.get('SvcMail')?.Outputs ?? {});
    for (const name of [
      'ApiUrl',
      'TableName',
      'QueueUrl',
      'BucketName',
      'ConsoleUrl',
      'DashboardName',
      'InboundMxRecord',
    ])
      assert.ok(outputs.includes(name), `${name} missing`);
  });

  it("the WebACL's description matches WAFv2's pattern", () => {
    const pattern = /^[\w+=:#@/\-,.][\w+=:#@/\-,.\s]+[\w+=:#@/\-,.]$/;
    const acls = Object.values(resourcesOfType(template, 'AWS::WAFv2::WebACL'));
    assert.equal(acls.length, 1);
    for (const acl of acls) assert.match(acl.Properties.Description, pattern);
  });
});

describe('bounded consumers', () => {
  it('every SQS event source has a maximum concurrency, taken from context', () => {
    const queues = resourcesOfType(template, 'AWS::SQS::Queue');
    const sqsMappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')).filter(
      (mapping) => mapping.Properties.EventSourceArn?.['Fn::GetAtt']?.[0] in queues,
    );
    const expected: Record<string, number> = {
      sender: consumers.senderConcurrency,
      'dead-letter': consumers.deadLetterConcurrency,
      inbound: consumers.inboundConcurrency,
      'webhook-delivery': consumers.webhookConcurrency,
    };
    assert.equal(sqsMappings.length, Object.keys(expected).length);
    for (const [functionId, concurrency] of Object.entries(expected)) {
      const mapping = sqsMappings.find(
        (candidate) => candidate.Properties.FunctionName?.Ref === functionLogicalId(template, functionId),
      );
      assert.deepEqual(mapping?.Properties.ScalingConfig, { MaximumConcurrency: concurrency }, functionId);
    }
  });

  it('refuses a maximum concurrency outside 2 to 1,000', () => {
    assert.throws(
      () => synthService({ context: { inboundConcurrency: '1' } }),
      /inboundConcurrency must be an integer >= 2/,
    );
    assert.throws(
      () => synthService({ context: { deadLetterConcurrency: '1001' } }),
      /deadLetterConcurrency must be at most 1000/,
    );
  });
});

describe('CloudFormation validation as errors', () => {
  it('cdk.json turns validation findings into errors', () => {
    assert.equal(cdkJsonContext()['@aws-cdk/core:validateAgainstDefaultRules'], true);
  });

  // CloudFormation validation loads its schema engine first: minutes on a busy 2-core machine.
  it('a finding in a nested stack fails synthesis, naming the property and the pattern', {
    timeout: 300_000,
  }, () => {
    // A small app with the plugin infra/app.ts registers: CDK's own pass reads only top-level stacks.
    const probe = new App({ context: { '@aws-cdk/core:validateAgainstDefaultRules': true } });
    const nested = new NestedStack(new Stack(probe, 'Probe'), 'Part');
    new wafv2.CfnWebACL(nested, 'ProbeAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: 'Not (allowed)',
      visibilityConfig: {
        cloudWatchMetricsEnabled: false,
        metricName: 'probe',
        sampledRequestsEnabled: false,
      },
    });
    Validations.of(probe).addPlugins(new TemplateValidation());
    assert.throws(() => probe.synth(), /Description: 'Not \(allowed\)' does not match pattern/);
  });
});
