import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { countingStreamDefinition } from '../../infra/resources/definitions.ts';
import { domainMetric } from '../../shared/platform/observability/metric-names.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

/** Statistics (docs/stats.md): the counting consumer's stream mapping and the per-domain dashboard. */
const { template } = synthService({
  context: { stackName: 'MailStats', sesIdentity: 'shop.example,news@mail.example' },
});
const [tableId] = Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table')).filter((id) =>
  id.startsWith('StorageTable'),
);
const mappings = Object.values(resourcesOfType(template, 'AWS::Lambda::EventSourceMapping'));
const mappingOf = (functionId: string) =>
  mappings.filter(
    (mapping) =>
      JSON.stringify(mapping.Properties.FunctionName) ===
      JSON.stringify({ Ref: functionLogicalId(template, functionId) }),
  );

describe('the counting consumer', () => {
  it('reads the table stream in order, with the shard id (tumbling window), retrying a batch whole until it succeeds', () => {
    const [mapping, ...more] = mappingOf('stats-counter');
    assert.equal(more.length, 0);
    const properties = mapping?.Properties as Record<string, any>;
    assert.deepEqual(properties.EventSourceArn, { 'Fn::GetAtt': [tableId, 'StreamArn'] });
    assert.equal(properties.StartingPosition, 'TRIM_HORIZON');
    assert.equal(properties.TumblingWindowInSeconds, countingStreamDefinition.tumblingWindowSeconds);
    assert.equal(properties.ParallelizationFactor, 1);
    assert.equal(properties.BisectBatchOnFunctionError, false);
    assert.equal(properties.MaximumRetryAttempts, -1);
    assert.deepEqual(properties.FunctionResponseTypes, ['ReportBatchItemFailures']);
    assert.equal(
      properties.MaximumBatchingWindowInSeconds,
      countingStreamDefinition.maxBatchingWindowSeconds,
    );
  });
});

describe('the dashboard', () => {
  const body = JSON.stringify(
    Object.values(resourcesOfType(template, 'AWS::CloudWatch::Dashboard'))[0]?.Properties,
  );

  it('has the bounce and complaint rate of each sending domain the stack knows, with the guard lines', () => {
    assert.ok(body.includes('Bounce rate by sending domain'));
    assert.ok(body.includes('Complaint rate by sending domain'));
    for (const domain of ['shop.example', 'mail.example'])
      assert.ok(body.includes(`\\"${domain}\\"`), domain);
    assert.match(body, /IF\(w0 > 0, 100 \* p0 \/ w0, 0\)/);
    for (const name of Object.values(domainMetric)) assert.ok(body.includes(name), name);
    for (const level of ['2.5', '0.05', '5', '0.1']) assert.ok(body.includes(`\\"value\\":${level}`), level);
  });

  it('searches every counted domain too (mail through an SMTP relay names no identity)', () => {
    // The dashboard body is JSON in JSON: the search's quotes arrive escaped twice.
    const searches = body.match(/SEARCH\('\{SvcMail,domain,service\} MetricName=[^']*'/g) ?? [];
    assert.equal(searches.length, 3);
    for (const name of ['DomainSent', 'DomainBounced', 'DomainComplained'])
      assert.ok(
        searches.some((search) => search.includes(name) && search.includes('MailStats')),
        name,
      );
  });
});
