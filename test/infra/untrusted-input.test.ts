import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { untrustedInputFunctions } from '../../infra/stack/untrusted-input.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

/**
 * Isolation of untrusted work on AWS (docs/security.md, "Limits"): the functions that render or
 * parse untrusted input have reserved concurrency (the API ones) or a capped queue mapping
 * (inbound) from the stack context, so a flood of them cannot take the sender's, the webhooks' or
 * the rest of the API's concurrency.
 */
const { template } = synthService();
const functionOf = (synthesized: typeof template, id: string) =>
  resourcesOfType(synthesized, 'AWS::Lambda::Function')[functionLogicalId(synthesized, id)] as Record<
    string,
    any
  >;
const mappingOf = (synthesized: typeof template, id: string) =>
  Object.values(resourcesOfType(synthesized, 'AWS::Lambda::EventSourceMapping')).find(
    (mapping) =>
      JSON.stringify(mapping.Properties.FunctionName) ===
      JSON.stringify({ Ref: functionLogicalId(synthesized, id) }),
  ) as Record<string, any>;

describe('concurrency of untrusted work', () => {
  it('template-render, template-add, template-update and message-content reserve untrustedInputConcurrency (10 by default)', () => {
    assert.deepEqual([...untrustedInputFunctions].sort(), [
      'message-content',
      'template-add',
      'template-render',
      'template-update',
    ]);
    for (const id of untrustedInputFunctions)
      assert.equal(functionOf(template, id).Properties.ReservedConcurrentExecutions, 10, id);
    const { template: wider } = synthService({ context: { untrustedInputConcurrency: '25' } });
    for (const id of untrustedInputFunctions)
      assert.equal(functionOf(wider, id).Properties.ReservedConcurrentExecutions, 25, id);
  });

  it('the sender, webhooks and the other API functions reserve nothing (they keep the shared pool)', () => {
    for (const id of ['sender', 'webhook-delivery', 'message-add', 'message-query', 'health'])
      assert.equal(functionOf(template, id).Properties.ReservedConcurrentExecutions, undefined, id);
  });

  it('inbound runs at most inboundConcurrency invocations at once (2 by default)', () => {
    assert.deepEqual(mappingOf(template, 'inbound').Properties.ScalingConfig, { MaximumConcurrency: 2 });
    const { template: wider } = synthService({ context: { inboundConcurrency: '6' } });
    assert.deepEqual(mappingOf(wider, 'inbound').Properties.ScalingConfig, { MaximumConcurrency: 6 });
  });

  it('refuses values outside what Lambda accepts', () => {
    assert.throws(
      () => synthService({ context: { untrustedInputConcurrency: '0' } }),
      /untrustedInputConcurrency/,
    );
    assert.throws(() => synthService({ context: { inboundConcurrency: '1' } }), /inboundConcurrency/);
    assert.throws(() => synthService({ context: { inboundConcurrency: '1001' } }), /inboundConcurrency/);
  });
});
