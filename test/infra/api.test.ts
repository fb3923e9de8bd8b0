import assert from 'node:assert/strict';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, it } from 'vitest';
import { routes } from '../../shared/routes.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

// One synth per file (module scope), shared by every test below.
const { template } = synthService();
const resources = resourcesOfType(template, 'AWS::ApiGateway::Resource');
const methods = Object.values(resourcesOfType(template, 'AWS::ApiGateway::Method'));
const restApiId = Object.keys(resourcesOfType(template, 'AWS::ApiGateway::RestApi'))[0] as string;

/** Logical id of the API resource for a path, walking PathPart / ParentId from the root. */
function resourceIdForPath(path: string): string {
  let parent: unknown = { 'Fn::GetAtt': [restApiId, 'RootResourceId'] };
  let id = '';
  for (const part of path.split('/').filter((segment) => segment !== '')) {
    const match = Object.entries(resources).find(
      ([, resource]) =>
        resource.Properties.PathPart === part &&
        JSON.stringify(resource.Properties.ParentId) === JSON.stringify(parent),
    );
    assert.ok(match, `no API resource for "${part}" of ${path}`);
    id = match[0];
    parent = { Ref: id };
  }
  return id;
}

function methodsOn(resourceId: string) {
  return methods.filter(
    (method) => JSON.stringify(method.Properties.ResourceId) === JSON.stringify({ Ref: resourceId }),
  );
}

const paths = [...new Set(routes.map((route) => route.path))];

describe('REST API: routes → functions → methods', () => {
  for (const route of routes) {
    it(`${route.method} ${route.path} is a Lambda proxy to the ${route.id} function`, () => {
      const onPath = methodsOn(resourceIdForPath(route.path)).filter(
        (method) => method.Properties.HttpMethod === route.method,
      );
      assert.equal(onPath.length, 1);
      const integration = onPath[0]?.Properties.Integration;
      assert.equal(integration.Type, 'AWS_PROXY');
      assert.equal(integration.IntegrationHttpMethod, 'POST');
      const target = JSON.stringify(integration.Uri);
      assert.ok(
        target.includes(`"${functionLogicalId(template, route.id)}","Arn"`),
        `${route.method} ${route.path} integrates ${target}`,
      );
      // Routes that answer first and then record (after-response.ts) stream their response.
      if (route.afterResponse) {
        assert.equal(integration.ResponseTransferMode, 'STREAM', route.id);
        assert.ok(target.includes('response-streaming-invocations'), `${route.id} integrates ${target}`);
      } else {
        assert.notEqual(integration.ResponseTransferMode, 'STREAM', route.id);
        assert.ok(!target.includes('response-streaming-invocations'), `${route.id} integrates ${target}`);
      }
    });
  }

  it('streams exactly the routes declared afterResponse: the tracking routes', () => {
    assert.deepEqual(
      routes.filter((route) => route.afterResponse).map((route) => route.id),
      ['track-open', 'track-click'],
    );
  });

  it('has exactly one Lambda-integrated method per route, and no other Lambda methods', () => {
    const proxies = methods.filter((method) => method.Properties.Integration?.Type === 'AWS_PROXY');
    assert.equal(proxies.length, routes.length);
  });

  it('lets API Gateway invoke each function only through its own method and path', () => {
    for (const route of routes) {
      const permissions = Object.values(resourcesOfType(template, 'AWS::Lambda::Permission')).filter(
        (permission) =>
          JSON.stringify(permission.Properties.FunctionName).includes(
            `"${functionLogicalId(template, route.id)}"`,
          ) && permission.Properties.Principal === 'apigateway.amazonaws.com',
      );
      assert.equal(permissions.length, 1, `${route.id}: ${permissions.length} invoke permissions`);
      const sourceArn = JSON.stringify(permissions[0]?.Properties.SourceArn);
      // A `{name}` segment is `*` in the source ARN.
      const arnPath = route.path.replace(/\{[A-Za-z0-9_]+\}/g, '*');
      assert.ok(sourceArn.includes(`/${route.method}${arnPath}`), `${route.id} permission: ${sourceArn}`);
    }
  });

  it('has no methods on the root or intermediate paths (unknown paths fall to the 404 / code 100 response)', () => {
    const known = new Set(paths.map(resourceIdForPath));
    for (const method of methods) {
      const ref = method.Properties.ResourceId.Ref as string | undefined;
      assert.ok(
        ref !== undefined && known.has(ref),
        `method ${method.Properties.HttpMethod} on a path without routes`,
      );
    }
  });
});

describe('REST API: OPTIONS and wrong methods answer without a function', () => {
  for (const path of paths) {
    const allowed = routes.filter((route) => route.path === path).map((route) => route.method);

    it(`OPTIONS ${path} → MOCK 202, code 101, CORS headers`, () => {
      const [options] = methodsOn(resourceIdForPath(path)).filter(
        (m) => m.Properties.HttpMethod === 'OPTIONS',
      );
      assert.ok(options);
      assert.equal(options.Properties.AuthorizationType, 'NONE');
      const integration = options.Properties.Integration;
      assert.equal(integration.Type, 'MOCK');
      const [response] = integration.IntegrationResponses;
      assert.equal(response.StatusCode, '202');
      assert.match(
        response.ResponseTemplates['application/json'],
        /\{"error":\{"code":101,"message":"[^"]+"\}\}/,
      );
      const headers = response.ResponseParameters;
      assert.equal(headers['method.response.header.access-control-allow-origin'], "'*'");
      assert.equal(
        headers['method.response.header.access-control-allow-methods'],
        `'${allowed.join(', ')}, OPTIONS'`,
      );
      assert.match(headers['method.response.header.access-control-allow-headers'], /authorization/);
      assert.deepEqual(
        options.Properties.MethodResponses.map((r: { StatusCode: string }) => r.StatusCode),
        ['202'],
      );
    });

    it(`any other method on ${path} → MOCK 405, code 102, allow: ${allowed.join(', ')}`, () => {
      const [any] = methodsOn(resourceIdForPath(path)).filter((m) => m.Properties.HttpMethod === 'ANY');
      assert.ok(any);
      const [response] = any.Properties.Integration.IntegrationResponses;
      assert.equal(any.Properties.Integration.Type, 'MOCK');
      assert.equal(response.StatusCode, '405');
      assert.deepEqual(JSON.parse(response.ResponseTemplates['application/json']), {
        error: { code: 102, message: `${path} accepts only ${allowed.join(', ')}` },
      });
      assert.equal(response.ResponseParameters['method.response.header.allow'], `'${allowed.join(', ')}'`);
    });
  }

  it('echoes only configured origins when corsOrigins is a list', () => {
    const { template: listed } = synthService({
      context: { corsOrigins: ['https://app.example.com', 'https://admin.example.com'] },
    });
    const options = Object.values(resourcesOfType(listed, 'AWS::ApiGateway::Method')).find(
      (method) => method.Properties.HttpMethod === 'OPTIONS',
    );
    assert.ok(options);
    const [response] = options.Properties.Integration.IntegrationResponses;
    assert.equal(
      response.ResponseParameters['method.response.header.access-control-allow-origin'],
      undefined,
    );
    const body = response.ResponseTemplates['application/json'] as string;
    assert.match(
      body,
      /"https:\/\/app\.example\.com"\)#set\(\$context\.responseOverride\.header\.access-control-allow-origin/,
    );
    assert.match(body, /https:\/\/admin\.example\.com/);
    assert.doesNotMatch(body, /"\*"/);
  });
});

describe('REST API: gateway responses in the service envelope', () => {
  const expected: Array<[string, string, number]> = [
    ['MISSING_AUTHENTICATION_TOKEN', '404', 100],
    ['RESOURCE_NOT_FOUND', '404', 100],
    ['THROTTLED', '429', 115],
    ['QUOTA_EXCEEDED', '429', 115],
    ['REQUEST_TOO_LARGE', '406', 107],
    ['WAF_FILTERED', '401', 103],
    ['ACCESS_DENIED', '403', 113],
    ['DEFAULT_4XX', '406', 107],
    ['DEFAULT_5XX', '500', 2],
  ];
  for (const [type, status, code] of expected) {
    it(`${type} → ${status} with code ${code}`, () => {
      const matches = template.findResources('AWS::ApiGateway::GatewayResponse', {
        Properties: { ResponseType: type, StatusCode: status },
      });
      const [response] = Object.values(matches);
      assert.ok(response, `no ${type} gateway response with status ${status}`);
      const body = JSON.parse(response.Properties.ResponseTemplates['application/json']);
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
      assert.equal(
        response.Properties.ResponseParameters['gatewayresponse.header.access-control-allow-origin'],
        "'*'",
      );
      assert.equal(
        response.Properties.ResponseParameters['gatewayresponse.header.x-request-id'],
        'context.requestId',
        'every gateway answer carries the request id',
      );
    });
  }

  it('REQUEST_TOO_LARGE names the limit in MB in its detail, as the local gateway does', () => {
    const [response] = Object.values(
      template.findResources('AWS::ApiGateway::GatewayResponse', {
        Properties: { ResponseType: 'REQUEST_TOO_LARGE' },
      }),
    );
    const body = JSON.parse(response?.Properties.ResponseTemplates['application/json']);
    assert.deepEqual(body.error.details, [
      { field: '(body)', message: 'The request is larger than the gateway accepts: at most 6 MB' },
    ]);
  });

  it('never tells a caller more than the request id on a 5xx', () => {
    const [response] = Object.values(
      template.findResources('AWS::ApiGateway::GatewayResponse', {
        Properties: { ResponseType: 'DEFAULT_5XX' },
      }),
    );
    const body = JSON.parse(response?.Properties.ResponseTemplates['application/json']);
    assert.match(body.error.message, /\$context\.requestId/);
    assert.doesNotMatch(body.error.message, /\$context\.(error|integration)/);
  });
});

describe('REST API: stage', () => {
  it('throttles the stage from context and logs access as JSON, without request bodies', () => {
    const { template: custom } = synthService({
      context: { stageThrottleRps: '7', stageThrottleBurst: '11' },
    });
    custom.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 7,
          ThrottlingBurstLimit: 11,
          DataTraceEnabled: false,
          LoggingLevel: 'ERROR',
        }),
      ]),
      AccessLogSetting: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('"requestId"') },
    });
  });

  it('uses the cdk.json throttling by default', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 }),
      ]),
    });
  });
});
