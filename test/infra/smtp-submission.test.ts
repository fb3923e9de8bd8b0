import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { resourcesOfType, synthService } from '../support/infra.ts';

/** The optional SMTP submission host on AWS (infra/stack/smtp-submission.ts, docs/smtp.md). */
const secret = 'svc-mail/submission-tls';
const on = synthService({ context: { smtpSubmission: true, smtpSubmissionCertificateSecret: secret } });
const off = synthService({ context: {} });
const nested = (synth: typeof on) =>
  synth.stack.smtpSubmission === undefined ? undefined : synth.stack.smtpSubmission.node.scope;

describe('SMTP submission on AWS', () => {
  it('an NLB with TCP listeners on 587, 465, 2587 and 2465 before a Fargate service reading the certificate secret', async () => {
    const { Template } = await import('aws-cdk-lib/assertions');
    const scope = nested(on);
    assert.ok(scope !== undefined);
    const template = Template.fromStack(scope as never);
    const listeners = Object.values(resourcesOfType(template, 'AWS::ElasticLoadBalancingV2::Listener'));
    assert.deepEqual(listeners.map((l) => l.Properties.Port).sort(), [2465, 2587, 465, 587].sort());
    for (const listener of listeners) assert.equal(listener.Properties.Protocol, 'TCP');
    template.resourceCountIs('AWS::ECS::Service', 1);
    const definitions = Object.values(resourcesOfType(template, 'AWS::ECS::TaskDefinition'));
    const secrets = JSON.stringify(definitions[0]?.Properties.ContainerDefinitions[0].Secrets);
    assert.match(secrets, /TLS_CERT.*secret:svc-mail\/submission-tls.*:cert::/);
    assert.match(secrets, /TLS_KEY.*:key::/);
  });

  it('nothing of it without the context', () => {
    assert.equal(off.stack.smtpSubmission, undefined);
    assert.doesNotMatch(JSON.stringify(off.template.toJSON()), /SmtpSubmission/);
  });
});
