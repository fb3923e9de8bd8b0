import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, it } from 'vitest';
import { ConfigError, readConfig } from '../../infra/config.ts';
import { cdkJsonContext, resourcesOfType, synthService } from '../support/infra.ts';

/*
 * The web console on AWS: a private bucket that only the distribution reads (origin access
 * control), the security headers policy, the deployment of the built files with config.json, the
 * outputs an operator registers at the identity provider, and the context that configures it.
 */
const { template, stack, app } = synthService();

/** The config.json staged for deployment (its API URL parts are markers CloudFormation fills in). */
function stagedConfig(synthesized: App): Record<string, string> {
  const files = readdirSync(synthesized.outdir)
    .map((entry) => join(synthesized.outdir, entry, 'config.json'))
    .filter((file) => existsSync(file));
  assert.equal(files.length, 1);
  return JSON.parse(readFileSync(files[0] as string, 'utf8'));
}
const resources = template.toJSON().Resources as Record<string, { Type: string; Properties: any }>;
const only = <T = any>(type: string): T => {
  const found = Object.values(resourcesOfType(template, type));
  assert.equal(found.length, 1, `one ${type}`);
  return (found[0] as { Properties: T }).Properties;
};
const consoleBucketId = stack.getLogicalId(stack.console.bucket.node.defaultChild as never);
const distributionId = stack.getLogicalId(stack.console.distribution.node.defaultChild as never);

function securityHeaders(): any {
  return only('AWS::CloudFront::ResponseHeadersPolicy').ResponseHeadersPolicyConfig;
}

/** A CloudFormation value (string or Fn::Join of strings and references) as readable text. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value !== null && typeof value === 'object' && 'Fn::Join' in value) {
    const [separator, parts] = (value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
    return parts.map(text).join(separator);
  }
  return JSON.stringify(value);
}

describe('console hosting: bucket, distribution, headers', () => {
  it('keeps the files in a private, encrypted bucket that only this distribution may read (OAC)', () => {
    const bucket = resources[consoleBucketId]?.Properties;
    assert.deepEqual(bucket.PublicAccessBlockConfiguration, {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    assert.equal(
      bucket.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm,
      'AES256',
    );
    const oac = only('AWS::CloudFront::OriginAccessControl').OriginAccessControlConfig;
    assert.equal(oac.OriginAccessControlOriginType, 's3');
    assert.equal(oac.SigningBehavior, 'always');
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: consoleBucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 's3:GetObject',
            Effect: 'Allow',
            Principal: { Service: 'cloudfront.amazonaws.com' },
            Condition: {
              StringEquals: {
                'AWS:SourceArn': Match.objectLike({
                  'Fn::Join': Match.arrayWith([Match.arrayWith([{ Ref: distributionId }])]),
                }),
              },
            },
          }),
        ]),
      },
    });
    const policies = Object.values(resourcesOfType(template, 'AWS::S3::BucketPolicy')).filter(
      (policy) => policy.Properties.Bucket.Ref === consoleBucketId,
    );
    const principals = policies.flatMap((policy) =>
      policy.Properties.PolicyDocument.Statement.filter((statement: any) => statement.Effect === 'Allow').map(
        (statement: any) => JSON.stringify(statement.Principal),
      ),
    );
    assert.deepEqual(
      principals,
      ['{"Service":"cloudfront.amazonaws.com"}'],
      'no other reader, nothing public',
    );
  });

  it('serves it over HTTPS only, index.html at the root, with the security headers policy', () => {
    const config = resources[distributionId]?.Properties.DistributionConfig;
    assert.equal(config.DefaultRootObject, 'index.html');
    assert.equal(config.DefaultCacheBehavior.ViewerProtocolPolicy, 'redirect-to-https');
    assert.deepEqual(config.DefaultCacheBehavior.AllowedMethods, ['GET', 'HEAD']);
    assert.ok(config.DefaultCacheBehavior.ResponseHeadersPolicyId);
    assert.ok(config.Logging.Bucket, 'access logs');
    assert.equal(config.Aliases, undefined, 'CloudFront domain without consoleDomainName');
  });

  it('sets a CSP with scripts from its own origin, connections to the API and the issuer only, HSTS and no framing', () => {
    const headers = securityHeaders().SecurityHeadersConfig;
    const csp = text(headers.ContentSecurityPolicy.ContentSecurityPolicy);
    const directives = new Map(
      csp.split('; ').map((directive) => {
        const [name, ...values] = directive.split(' ');
        return [name, values.join(' ')];
      }),
    );
    assert.equal(directives.get('script-src'), "'self'");
    const httpApi = stack.getLogicalId(stack.api.api.node.defaultChild as never);
    assert.equal(
      directives.get('connect-src'),
      `'self' https://{"Ref":"${httpApi}"}.execute-api.{"Ref":"AWS::Region"}.{"Ref":"AWS::URLSuffix"} https://auth.example.com`,
    );
    assert.equal(directives.get('img-src'), "'self' data: https:", 'no plain-http images on AWS');
    assert.equal(directives.get('frame-ancestors'), "'none'");
    assert.doesNotMatch(csp, /unsafe-eval/);
    assert.equal(headers.ContentSecurityPolicy.Override, true);
    assert.equal(headers.StrictTransportSecurity.AccessControlMaxAgeSec, 31_536_000);
    assert.equal(headers.StrictTransportSecurity.IncludeSubdomains, true);
    assert.equal(headers.FrameOptions.FrameOption, 'DENY');
    assert.equal(headers.ContentTypeOptions.Override, true);
    assert.equal(headers.ReferrerPolicy.ReferrerPolicy, 'no-referrer');
  });
});

describe('console hosting: deployment and outputs', () => {
  const deployments = Object.values(resourcesOfType(template, 'Custom::CDKBucketDeployment')).map(
    (resource) => resource.Properties,
  );

  it('copies the hashed assets as immutable and the page with config.json as revalidated, invalidating the page', () => {
    assert.equal(deployments.length, 2);
    const assets = deployments.find((deployment) => deployment.DistributionId === undefined) as any;
    const page = deployments.find((deployment) => deployment.DistributionId !== undefined) as any;
    assert.deepEqual(assets.SystemMetadata, { 'cache-control': 'public, max-age=31536000, immutable' });
    assert.equal(assets.Prune, false, 'pages still open keep their scripts');
    assert.deepEqual(page.SystemMetadata, { 'cache-control': 'no-cache' });
    assert.deepEqual(page.DistributionPaths, ['/', '/index.html', '/config.json']);
    assert.equal(page.SourceObjectKeys.length, 2, 'the page and config.json');
    // config.json is written at deploy time with the API's URL (markers CloudFormation fills in).
    assert.match(JSON.stringify(page.SourceMarkers), /"Ref":"Http\w+"/);
    const config = stagedConfig(app);
    assert.match(config.api_url as string, /^https:\/\/<<marker:\w+:0>>\.execute-api\.<<marker:\w+:1>>\./);
    assert.equal(config.client_id, 'svc-mail-console');
    assert.equal(config.issuer, 'https://auth.example.com/');
    assert.equal(config.resource, undefined);
    assert.equal(config.account_claim, 'sub', "the API's account claim, for the console's signed in as");
    assert.equal(page.DestinationBucketName.Ref, consoleBucketId);
  });

  it('outputs the console URL (its redirect URI), client id and issuer', () => {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    assert.match(
      text(outputs.ConsoleUrl?.Value),
      /^https:\/\/\{"Fn::GetAtt":\["ConsoleDistribution\w+","DomainName"\]\}\/$/,
    );
    assert.equal(outputs.ConsoleClientId?.Value, 'svc-mail-console');
    assert.equal(outputs.ConsoleIssuer?.Value, 'https://auth.example.com/');
    assert.ok(outputs.ConsoleBucketName);
    assert.ok(outputs.ConsoleDistributionId);
  });

  it('takes its client, issuer, resource and custom domain from context; the API then allows that origin', () => {
    const custom = synthService({
      context: {
        consoleClientId: 'mail-console',
        consoleIssuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_abc',
        consoleIdentityOrigins: 'https://mail.auth.eu-west-1.amazoncognito.com',
        consoleResource: 'https://mail-api.example.com',
        consoleDomainName: 'console.example.com',
        consoleCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123',
        corsOrigins: ['https://app.example.com'],
        authAccountClaim: 'custom:tenant',
      },
    });
    const config = Object.values(resourcesOfType(custom.template, 'AWS::CloudFront::Distribution'))[0]
      ?.Properties.DistributionConfig;
    assert.deepEqual(config.Aliases, ['console.example.com']);
    assert.equal(config.ViewerCertificate.MinimumProtocolVersion, 'TLSv1.2_2021');
    const outputs = custom.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    assert.equal(outputs.ConsoleUrl?.Value, 'https://console.example.com/');
    assert.equal(outputs.ConsoleClientId?.Value, 'mail-console');
    const csp = text(
      Object.values(resourcesOfType(custom.template, 'AWS::CloudFront::ResponseHeadersPolicy'))[0]?.Properties
        .ResponseHeadersPolicyConfig.SecurityHeadersConfig.ContentSecurityPolicy.ContentSecurityPolicy,
    );
    assert.match(
      csp,
      /connect-src 'self' \S+ https:\/\/cognito-idp\.eu-west-1\.amazonaws\.com https:\/\/mail\.auth\.eu-west-1\.amazoncognito\.com;/,
    );
    const staged = stagedConfig(custom.app);
    assert.equal(staged.resource, 'https://mail-api.example.com', 'the resource indicator in config.json');
    assert.equal(staged.client_id, 'mail-console');
    assert.equal(staged.account_claim, 'custom:tenant');
    const env = Object.values(resourcesOfType(custom.template, 'AWS::Lambda::Function'))
      .map((fn) => fn.Properties.Environment?.Variables?.CORS_ORIGINS)
      .filter((value) => value !== undefined);
    assert.ok(env.length > 0);
    assert.ok(env.every((value) => value === 'https://app.example.com,https://console.example.com'));
  });

  it('refuses a custom domain without its certificate, a certificate outside us-east-1 and an http issuer', () => {
    const context = cdkJsonContext();
    const problems = (overrides: Record<string, unknown>) => {
      try {
        readConfig((key) => ({ ...context, ...overrides })[key]);
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      return assert.fail('expected a configuration error');
    };
    assert.match(
      problems({ consoleDomainName: 'console.example.com' }),
      /consoleDomainName and consoleCertificateArn go together/,
    );
    assert.match(
      problems({
        consoleDomainName: 'console.example.com',
        consoleCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      }),
      /consoleCertificateArn must be an ACM certificate in us-east-1/,
    );
    assert.match(
      problems({ consoleIssuer: 'http://id.example.com' }),
      /consoleIssuer must be an https:\/\/ URL/,
    );
    assert.match(
      problems({ consoleIdentityOrigins: 'https://a.example.com/path' }),
      /consoleIdentityOrigins/,
    );
  });
});
