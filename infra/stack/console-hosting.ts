import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { consoleDistDir } from '../../console/build.ts';
import { type ConsoleConfig, consoleContentSecurityPolicy } from '../../console/src/config-contract.ts';
import type { ConsoleSettings } from '../config.ts';

export interface ConsoleHostingProps {
  readonly settings: ConsoleSettings;
  /** The API's base URL (the stage URL) and origin, for config.json and the CSP. */
  readonly apiUrl: string;
  readonly apiOrigin: string;
  /** The claim that names the account (authAccountClaim), so the console shows whom the API acts for. */
  readonly accountClaim: string;
  /** Where S3 writes the console bucket's access logs (the stack's access-log bucket). */
  readonly accessLogBucket: s3.IBucket;
  readonly logRetention: logs.RetentionDays;
}

/**
 * The web console on AWS: the files Vite built (console/dist), in a private S3 bucket that only
 * this CloudFront distribution can read (origin access control), served over HTTPS with the
 * console's security headers (CSP, HSTS, frame-ancestors, nosniff, no referrer) from a response
 * headers policy, and deployed by `cdk deploy` (BucketDeployment) with its config.json: the API's
 * URL and the OpenID settings. Hashed assets are cached for a year; the page and config.json are
 * revalidated and invalidated on each deployment.
 */
export class ConsoleHosting extends Construct {
  readonly bucket: s3.Bucket;
  readonly logBucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  readonly headers: cloudfront.ResponseHeadersPolicy;
  /** `https://<domain>`: the console's origin and, with a trailing slash, its redirect URI. */
  readonly url: string;
  /** Whether it is served on its own domain (consoleDomainName) rather than CloudFront's. */
  readonly customDomain: boolean;

  constructor(scope: Construct, id: string, props: ConsoleHostingProps) {
    super(scope, id);
    const { settings } = props;
    if (!existsSync(join(consoleDistDir, 'index.html'))) {
      throw new Error('The web console is not built (console/dist): run npm ci or npm run console:build');
    }

    this.bucket = new s3.Bucket(this, 'Assets', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: props.accessLogBucket,
      serverAccessLogsPrefix: 'console-bucket/',
      // Only built files live here: the deployment below removes them when the stack goes.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // CloudFront's standard logs are written with ACLs, which the stack's access-log bucket
    // (bucket owner enforced) does not take: a bucket of their own.
    this.logBucket = new s3.Bucket(this, 'Logs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      serverAccessLogsBucket: props.accessLogBucket,
      serverAccessLogsPrefix: 'console-log-bucket/',
      lifecycleRules: [{ id: 'expire-console-logs', expiration: Duration.days(365) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const issuerOrigin = new URL(settings.issuer).origin;
    this.headers = new cloudfront.ResponseHeadersPolicy(this, 'SecurityHeaders', {
      comment: 'svc-mail console: CSP (scripts from its own origin only), HSTS, no framing',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: consoleContentSecurityPolicy({
            connect: [props.apiOrigin, issuerOrigin, ...settings.identityOrigins],
            allowHttpImages: false,
          }),
          override: true,
        },
        strictTransportSecurity: {
          accessControlMaxAge: Duration.days(365),
          includeSubdomains: true,
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: cloudfront.HeadersFrameOption.DENY, override: true },
        referrerPolicy: { referrerPolicy: cloudfront.HeadersReferrerPolicy.NO_REFERRER, override: true },
      },
      customHeadersBehavior: {
        customHeaders: [{ header: 'Cross-Origin-Opener-Policy', value: 'same-origin', override: true }],
      },
    });

    this.customDomain = settings.domainName !== undefined && settings.certificateArn !== undefined;
    const customDomain =
      settings.domainName === undefined || settings.certificateArn === undefined
        ? {}
        : {
            domainNames: [settings.domainName],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', settings.certificateArn),
            // Only a certificate of one's own lets the minimum protocol be chosen.
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          };
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'svc-mail web console',
      defaultRootObject: 'index.html',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        responseHeadersPolicy: this.headers,
        compress: true,
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      enableLogging: true,
      logBucket: this.logBucket,
      logFilePrefix: 'cloudfront/',
      ...customDomain,
    });
    this.url = `https://${settings.domainName ?? this.distribution.distributionDomainName}`;

    const config: ConsoleConfig = {
      api_url: props.apiUrl,
      issuer: settings.issuer,
      client_id: settings.clientId,
      ...(settings.resource === undefined ? {} : { resource: settings.resource }),
      account_claim: props.accountClaim,
    };
    const deployLogs = new logs.LogGroup(this, 'DeploymentLogs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // The hashed files first (cached for a year, old ones kept for pages still open), then the
    // page and its config (revalidated on every load, invalidated at CloudFront).
    const assets = new s3deploy.BucketDeployment(this, 'DeployAssets', {
      sources: [s3deploy.Source.asset(consoleDistDir, { exclude: ['*', '!assets', '!assets/**'] })],
      destinationBucket: this.bucket,
      cacheControl: [
        s3deploy.CacheControl.setPublic(),
        s3deploy.CacheControl.maxAge(Duration.days(365)),
        s3deploy.CacheControl.immutable(),
      ],
      prune: false,
      retainOnDelete: false,
      memoryLimit: 256,
      logGroup: deployLogs,
    });
    const page = new s3deploy.BucketDeployment(this, 'DeployPage', {
      sources: [
        s3deploy.Source.asset(consoleDistDir, { exclude: ['assets', 'assets/**', '.source-hash'] }),
        s3deploy.Source.jsonData('config.json', config),
      ],
      destinationBucket: this.bucket,
      cacheControl: [s3deploy.CacheControl.noCache()],
      prune: false,
      retainOnDelete: false,
      memoryLimit: 256,
      logGroup: deployLogs,
      distribution: this.distribution,
      distributionPaths: ['/', '/index.html', '/config.json'],
    });
    page.node.addDependency(assets);
  }
}

/** The API's origin (`https://<id>.execute-api.<region>.<suffix>`), for the console's connect-src. */
export function executeApiOrigin(restApiId: string): string {
  return `https://${restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`;
}
