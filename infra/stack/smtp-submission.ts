import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as applicationautoscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { SmtpSubmissionSettings } from '../config.ts';
import { CompleteSecretArn } from './secret-arn.ts';

/** Public ports on the NLB and the container port each maps to (the container runs unprivileged). */
export const submissionListeners = [
  { port: 587, containerPort: 2587 },
  { port: 2587, containerPort: 2587 },
  { port: 465, containerPort: 2465 },
  { port: 2465, containerPort: 2465 },
] as const;

/** Open connections per running task above which a task is added, and below which one is removed. */
export const connectionsPerTask = { scaleOut: 200, scaleIn: 50 } as const;

/** What submission/log.ts writes as embedded metrics. */
const metricNamespace = 'svc-mail';
const metricService = 'smtp-submission';

/** AUTH refusals in five minutes that look like guessing rather than one misconfigured mailer. */
export const authFailureAlarmThreshold = 100;

export interface SmtpSubmissionProps {
  settings: SmtpSubmissionSettings;
  apiUrl: string;
  logRetentionDays: logs.RetentionDays;
  repositoryRoot: string;
}

/**
 * The SMTP submission host (submission/, docs/smtp.md): Fargate tasks in public subnets of their own
 * VPC (no NAT gateway: the tasks reach the API and ECR through their public addresses) behind a
 * Network Load Balancer that passes TCP through with the client's address, so TLS ends in the
 * container with the secret's certificate and the per-address limits see the real sender.
 */
export class SmtpSubmission extends Construct {
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  readonly service: ecs.FargateService;
  readonly certificateArn: CompleteSecretArn;
  readonly vpc: ec2.Vpc;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: SmtpSubmissionProps) {
    super(scope, id);
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      natGateways: 0,
      subnetConfiguration: [{ name: 'Public', subnetType: ec2.SubnetType.PUBLIC }],
    });
    this.vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(
        new logs.LogGroup(this, 'FlowLogs', {
          retention: props.logRetentionDays,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
      ),
    });
    const cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: this.vpc,
      containerInsightsV2: ecs.ContainerInsights.DISABLED,
    });

    this.certificateArn = new CompleteSecretArn(this, 'CertificateArn', props.settings.certificateSecret);
    const certificate = secretsmanager.Secret.fromSecretCompleteArn(
      this,
      'Certificate',
      this.certificateArn.arn,
    );
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const task = new ecs.FargateTaskDefinition(this, 'Task', { cpu: 256, memoryLimitMiB: 512 });
    task.addContainer('Submission', {
      image: ecs.ContainerImage.fromAsset(props.repositoryRoot, {
        file: 'submission/Dockerfile',
        exclude: ['.git'],
      }),
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'submission' }),
      environment: { API_URL: props.apiUrl },
      secrets: {
        TLS_CERT: ecs.Secret.fromSecretsManager(certificate, 'cert'),
        TLS_KEY: ecs.Secret.fromSecretsManager(certificate, 'key'),
      },
      portMappings: [{ containerPort: 2587 }, { containerPort: 2465 }],
    });
    this.service = new ecs.FargateService(this, 'Service', {
      cluster,
      taskDefinition: task,
      desiredCount: 1,
      assignPublicIp: true,
      vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
      circuitBreaker: { rollback: true },
      // A deploy starts the new task before it stops the old one: the host never goes dark.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
    });
    // The NLB keeps the client's address, so the tasks see the senders, not the balancer.
    this.service.connections.allowFromAnyIpv4(ec2.Port.tcp(2587), 'SMTP submission through the NLB');
    this.service.connections.allowFromAnyIpv4(ec2.Port.tcp(2465), 'SMTP submission over TLS through the NLB');

    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'Nlb', {
      vpc: this.vpc,
      internetFacing: true,
      crossZoneEnabled: true,
    });
    // One target group per container port; the standard and the unprivileged public port share it.
    const groups = new Map<number, elbv2.NetworkTargetGroup>();
    for (const containerPort of [2587, 2465]) {
      groups.set(
        containerPort,
        new elbv2.NetworkTargetGroup(this, `Target${containerPort}`, {
          vpc: this.vpc,
          port: containerPort,
          protocol: elbv2.Protocol.TCP,
          targetType: elbv2.TargetType.IP,
          targets: [this.service.loadBalancerTarget({ containerName: 'Submission', containerPort })],
          preserveClientIp: true,
          deregistrationDelay: Duration.seconds(30),
          healthCheck: {
            protocol: elbv2.Protocol.TCP,
            interval: Duration.seconds(30),
            healthyThresholdCount: 2,
            unhealthyThresholdCount: 2,
          },
        }),
      );
    }
    for (const { port, containerPort } of submissionListeners) {
      this.loadBalancer.addListener(`Port${port}`, {
        port,
        protocol: elbv2.Protocol.TCP,
        defaultTargetGroups: [groups.get(containerPort) as elbv2.NetworkTargetGroup],
      });
    }
    for (const [containerPort, group] of groups)
      this.alarms.push(
        group.metrics
          .unHealthyHostCount({ period: Duration.minutes(1) })
          .createAlarm(this, `Unhealthy${containerPort}`, {
            threshold: 1,
            evaluationPeriods: 3,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
            alarmDescription: `SMTP submission: a task fails the TCP health check on port ${containerPort}`,
          }),
      );
    this.scale(props.settings.maxTasks, groups.get(2587) as elbv2.NetworkTargetGroup);
    this.alarmOnRejections();
  }

  /** On open connections per healthy task (the NLB's flows), and on CPU as a second guard. */
  private scale(maxTasks: number, group: elbv2.NetworkTargetGroup): void {
    const scaling = this.service.autoScaleTaskCount({ minCapacity: 1, maxCapacity: maxTasks });
    const flowsPerTask = new cloudwatch.MathExpression({
      label: 'Open SMTP connections per healthy task',
      expression: 'IF(healthy > 0, flows / healthy, flows)',
      usingMetrics: {
        flows: this.loadBalancer.metrics.activeFlowCount({
          statistic: 'Maximum',
          period: Duration.minutes(1),
        }),
        healthy: group.metrics.healthyHostCount({ statistic: 'Minimum', period: Duration.minutes(1) }),
      },
      period: Duration.minutes(1),
    });
    scaling.scaleOnMetric('Connections', {
      metric: flowsPerTask,
      adjustmentType: applicationautoscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      scalingSteps: [
        { upper: connectionsPerTask.scaleIn, change: -1 },
        { lower: connectionsPerTask.scaleOut, change: +1 },
        { lower: connectionsPerTask.scaleOut * 2, change: +2 },
      ],
      evaluationPeriods: 2,
      cooldown: Duration.minutes(3),
    });
    scaling.scaleOnCpuUtilization('Cpu', { targetUtilizationPercent: 60 });
  }

  /** Guessing of API keys, and messages the host could not hand to the API. */
  private alarmOnRejections(): void {
    const metric = (metricName: string, dimensionsMap: Record<string, string>) =>
      new cloudwatch.Metric({
        namespace: metricNamespace,
        metricName,
        dimensionsMap: { service: metricService, ...dimensionsMap },
        statistic: 'Sum',
        period: Duration.minutes(5),
      });
    this.alarms.push(
      metric('SmtpAuthFailures', {}).createAlarm(this, 'AuthFailures', {
        threshold: authFailureAlarmThreshold,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription: `SMTP submission: ${authFailureAlarmThreshold} or more AUTH refusals in 5 minutes (someone guessing API keys?)`,
      }),
      metric('SmtpRejections', { reason: 'api_unavailable' }).createAlarm(this, 'ApiUnavailable', {
        threshold: 10,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        alarmDescription:
          'SMTP submission: 10 or more commands answered 4xx in 5 minutes because the API was unreachable',
      }),
    );
  }
}
