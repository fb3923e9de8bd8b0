import assert from 'node:assert/strict';
import { describe, it } from 'vitest';
import { authFailureAlarmThreshold, connectionsPerTask } from '../../infra/stack/smtp-submission.ts';
import { synthService } from '../support/infra.ts';

/** The optional SMTP submission host on AWS (infra/stack/smtp-submission.ts, docs/smtp.md). */
const secretName = 'svc-mail/submission-tls';
const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:svc-mail/submission-tls-AbC123';
const byName = synthService({
  context: { smtpSubmission: true, smtpSubmissionCertificateSecret: secretName, smtpSubmissionMaxTasks: '3' },
});
const byArn = synthService({ context: { smtpSubmission: true, smtpSubmissionCertificateSecret: secretArn } });
const off = synthService({ context: {} });
const part = (synth: typeof byName) => synth.templates.get('SvcMail/SmtpSubmission') as Record<string, any>;
const ofType = (synth: typeof byName, type: string) =>
  Object.entries(part(synth).Resources as Record<string, any>).filter(([, r]) => r.Type === type);

describe('SMTP submission on AWS', () => {
  it('lives in its own nested stack, with the NLB name as an output of the stack itself', () => {
    assert.ok(part(byName) !== undefined);
    // The limits of test/infra/limits.test.ts, for the templates this part adds to or changes.
    for (const path of ['SvcMail', 'SvcMail/SmtpSubmission']) {
      const json = byName.templates.get(path) as Record<string, any>;
      assert.ok(Object.keys(json.Resources).length <= 400, path);
      assert.ok(Buffer.byteLength(JSON.stringify(json)) <= 1_000_000, path);
    }
    const outputs = byName.templates.get('SvcMail')?.Outputs ?? {};
    assert.ok('SmtpSubmissionHost' in outputs);
  });

  it('an internet-facing NLB with TCP listeners on 587, 465, 2587 and 2465 to the two container ports', () => {
    const [[, nlb]] = ofType(byName, 'AWS::ElasticLoadBalancingV2::LoadBalancer') as [[string, any]];
    assert.equal(nlb.Properties.Scheme, 'internet-facing');
    assert.equal(nlb.Properties.Type, 'network');
    const listeners = ofType(byName, 'AWS::ElasticLoadBalancingV2::Listener').map(([, l]) => l.Properties);
    assert.deepEqual(listeners.map((l) => l.Port).sort(), [2465, 2587, 465, 587].sort());
    for (const listener of listeners) assert.equal(listener.Protocol, 'TCP');
    const groups = Object.fromEntries(
      ofType(byName, 'AWS::ElasticLoadBalancingV2::TargetGroup').map(([id, g]) => [id, g.Properties]),
    );
    const portOf = (listener: any) => groups[listener.DefaultActions[0].TargetGroupArn.Ref].Port;
    const mapping = Object.fromEntries(listeners.map((l) => [l.Port, portOf(l)]));
    assert.deepEqual(mapping, { 587: 2587, 2587: 2587, 465: 2465, 2465: 2465 });
    for (const group of Object.values(groups) as any[]) {
      assert.equal(group.Protocol, 'TCP');
      assert.equal(group.HealthCheckProtocol, 'TCP');
      assert.equal(group.TargetType, 'ip');
      // The per-address limits and AUTH slow-down need the sender's address, not the balancer's.
      assert.ok(
        group.TargetGroupAttributes.some(
          (a: any) => a.Key === 'preserve_client_ip.enabled' && a.Value === 'true',
        ),
      );
    }
  });

  it('the container gets TLS_CERT and TLS_KEY as JSON keys of the secret, resolved from a name to its complete ARN', () => {
    const secretsOf = (synth: typeof byName) => {
      const [[, definition]] = ofType(synth, 'AWS::ECS::TaskDefinition') as [[string, any]];
      return definition.Properties.ContainerDefinitions[0].Secrets as Array<{ Name: string; ValueFrom: any }>;
    };
    const arnSecrets = secretsOf(byArn);
    assert.deepEqual(
      arnSecrets.map((s) => [s.Name, s.ValueFrom]),
      [
        ['TLS_CERT', `${secretArn}:cert::`],
        ['TLS_KEY', `${secretArn}:key::`],
      ],
    );
    const lookups = ofType(byName, 'Custom::SecretCompleteArn');
    assert.equal(lookups.length, 1);
    const create = JSON.stringify(lookups[0]?.[1].Properties.Create);
    assert.match(create, /DescribeSecret/);
    assert.match(create, /svc-mail\/submission-tls/);
    const nameSecrets = JSON.stringify(secretsOf(byName));
    assert.match(nameSecrets, new RegExp(`"Fn::GetAtt":\\["${lookups[0]?.[0]}","ARN"\\]`));
    assert.match(nameSecrets, /:cert::/);
    assert.equal(ofType(byArn, 'Custom::SecretCompleteArn').length, 0);
  });

  it('scales on open connections per healthy task (NLB flows), and on CPU, up to smtpSubmissionMaxTasks', () => {
    const [[, target]] = ofType(byName, 'AWS::ApplicationAutoScaling::ScalableTarget') as [[string, any]];
    assert.equal(target.Properties.MinCapacity, 1);
    assert.equal(target.Properties.MaxCapacity, 3);
    const policies = ofType(byName, 'AWS::ApplicationAutoScaling::ScalingPolicy').map(
      ([, p]) => p.Properties,
    );
    assert.ok(policies.some((p) => p.PolicyType === 'TargetTrackingScaling'));
    const alarms = ofType(byName, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const flowAlarms = alarms.filter((a) =>
      JSON.stringify(a.Metrics ?? []).includes('"MetricName":"ActiveFlowCount"'),
    );
    assert.deepEqual(
      flowAlarms.map((a) => a.Threshold).sort(),
      [connectionsPerTask.scaleIn, connectionsPerTask.scaleOut].sort(),
    );
  });

  it('alarms on unhealthy tasks, AUTH failure spikes and an unreachable API, to the alarm topic', () => {
    const alarms = ofType(byName, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    const unhealthy = alarms.filter((a) => a.MetricName === 'UnHealthyHostCount');
    assert.equal(unhealthy.length, 2);
    const auth = alarms.find((a) => a.MetricName === 'SmtpAuthFailures');
    assert.equal(auth?.Namespace, 'svc-mail');
    assert.deepEqual(auth?.Dimensions, [{ Name: 'service', Value: 'smtp-submission' }]);
    assert.equal(auth?.Threshold, authFailureAlarmThreshold);
    const api = alarms.find((a) => a.MetricName === 'SmtpRejections');
    assert.deepEqual(api?.Dimensions.map((d: any) => `${d.Name}=${d.Value}`).sort(), [
      'reason=api_unavailable',
      'service=smtp-submission',
    ]);
    for (const alarm of [...unhealthy, auth, api]) assert.equal(alarm.AlarmActions.length, 1);
  });

  it('logs with retention, no Container Insights, no NAT gateway, public subnets only', () => {
    for (const [, group] of ofType(byName, 'AWS::Logs::LogGroup'))
      assert.equal(group.Properties.RetentionInDays, 30);
    assert.ok(ofType(byName, 'AWS::Logs::LogGroup').length >= 2);
    const [[, service]] = ofType(byName, 'AWS::ECS::Service') as [[string, any]];
    assert.equal(service.Properties.DeploymentConfiguration.MinimumHealthyPercent, 100);
    const [[, cluster]] = ofType(byName, 'AWS::ECS::Cluster') as [[string, any]];
    assert.deepEqual(cluster.Properties.ClusterSettings, [{ Name: 'containerInsights', Value: 'disabled' }]);
    assert.equal(ofType(byName, 'AWS::EC2::NatGateway').length, 0);
    for (const [, subnet] of ofType(byName, 'AWS::EC2::Subnet'))
      assert.equal(subnet.Properties.MapPublicIpOnLaunch, true);
  });

  it('synthesizes without a warning (what `cdk synth` would print)', () => {
    const messages = byName.app.synth().stacks.flatMap((stack) => stack.messages);
    assert.deepEqual(
      messages.filter((m) => m.level !== 'info').map((m) => `${m.id}: ${String(m.entry.data)}`),
      [],
    );
  });

  it('nothing of it without the context', () => {
    assert.equal(off.stack.smtpSubmission, undefined);
    assert.doesNotMatch(JSON.stringify(off.template.toJSON()), /SmtpSubmission/);
  });
});
