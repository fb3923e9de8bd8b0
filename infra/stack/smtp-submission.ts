import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { SmtpSubmissionSettings } from '../config.ts';

/** Public ports on the NLB and the container port each maps to (the container runs unprivileged). */
export const submissionListeners = [
  { port: 587, containerPort: 2587 },
  { port: 2587, containerPort: 2587 },
  { port: 465, containerPort: 2465 },
  { port: 2465, containerPort: 2465 },
] as const;

export interface SmtpSubmissionProps {
  settings: SmtpSubmissionSettings;
  apiUrl: string;
  logRetentionDays: logs.RetentionDays;
  repositoryRoot: string;
}

/**
 * The SMTP submission host (submission/, docs/smtp.md): Fargate tasks in public subnets of their own
 * VPC (no NAT gateway: the tasks reach the API and ECR through their public addresses) behind a
 * Network Load Balancer that passes TCP through, so TLS ends in the container with the secret's
 * certificate.
 */
export class SmtpSubmission extends Construct {
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  readonly service: ecs.FargateService;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: SmtpSubmissionProps) {
    super(scope, id);
    const acknowledge = (ackId: string, reason: string) =>
      Validations.of(this).acknowledge({ id: ackId, reason });
    acknowledge(
      'AwsSolutions::AwsSolutions-IAM5[Resource::*]',
      'ecr:GetAuthorizationToken takes no resource: the execution role pulls the image.',
    );
    acknowledge(
      'AwsSolutions::AwsSolutions-EC23',
      'A public SMTP submission port: clients connect from anywhere and authenticate with an API key.',
    );
    acknowledge(
      'AwsSolutions::AwsSolutions-ECS2',
      'API_URL is the public API address, not a secret; the certificate comes from Secrets Manager.',
    );
    acknowledge(
      'AwsSolutions::AwsSolutions-ELB2',
      'A TCP pass-through NLB: the tasks log every session; access logs would add a bucket at rest.',
    );
    const vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'Public', subnetType: ec2.SubnetType.PUBLIC }],
    });
    vpc.addFlowLog('FlowLog');
    const cluster = new ecs.Cluster(this, 'Cluster', {
      vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const certificate = secretsmanager.Secret.fromSecretNameV2(
      this,
      'Certificate',
      props.settings.certificateSecret,
    );
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const task = new ecs.FargateTaskDefinition(this, 'Task', { cpu: 256, memoryLimitMiB: 512 });
    const container = task.addContainer('Submission', {
      image: ecs.ContainerImage.fromAsset(props.repositoryRoot, { file: 'submission/Dockerfile' }),
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'submission' }),
      environment: { API_URL: props.apiUrl },
      secrets: {
        TLS_CERT: ecs.Secret.fromSecretsManager(certificate, 'cert'),
        TLS_KEY: ecs.Secret.fromSecretsManager(certificate, 'key'),
      },
      portMappings: [{ containerPort: 2587 }, { containerPort: 2465 }],
    });
    void container;
    this.service = new ecs.FargateService(this, 'Service', {
      cluster,
      taskDefinition: task,
      desiredCount: 1,
      assignPublicIp: true,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      circuitBreaker: { rollback: true },
    });
    this.service.connections.allowFromAnyIpv4(ec2.Port.tcp(2587), 'SMTP submission through the NLB');
    this.service.connections.allowFromAnyIpv4(ec2.Port.tcp(2465), 'SMTP submission over TLS through the NLB');
    const scaling = this.service.autoScaleTaskCount({ minCapacity: 1, maxCapacity: props.settings.maxTasks });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: 60 });

    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'Nlb', { vpc, internetFacing: true });
    for (const { port, containerPort } of submissionListeners) {
      const listener = this.loadBalancer.addListener(`Port${port}`, { port, protocol: elbv2.Protocol.TCP });
      const group = listener.addTargets(`Target${port}`, {
        port: containerPort,
        protocol: elbv2.Protocol.TCP,
        targets: [this.service.loadBalancerTarget({ containerName: 'Submission', containerPort })],
        deregistrationDelay: Duration.seconds(30),
      });
      this.alarms.push(
        group.metrics
          .unHealthyHostCount({ period: Duration.minutes(1) })
          .createAlarm(this, `Unhealthy${port}`, {
            threshold: 1,
            evaluationPeriods: 3,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            alarmDescription: `SMTP submission: unhealthy tasks behind port ${port}`,
          }),
      );
    }
  }
}
