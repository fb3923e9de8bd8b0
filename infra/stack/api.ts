import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { catalogue, type ErrorCode } from '../../shared/platform/errors/catalogue.ts';
import { methodNotAllowedMessage, tooLargeDetail } from '../../shared/platform/http/limits.ts';
import type { Route } from '../../shared/platform/http/route.ts';

/** JSON of the service's error envelope, as gateway responses and mock integrations send it. */
export function envelope(
  code: ErrorCode,
  message: string = catalogue[code].message,
  details?: readonly { field: string; message: string }[],
): string {
  return JSON.stringify({ error: details === undefined ? { code, message } : { code, message, details } });
}

/**
 * What API Gateway answers by itself, in the service's envelope with the catalogue's codes.
 * Keys are gateway response types; `status` overrides API Gateway's default status.
 */
export const gatewayResponses: Record<
  string,
  {
    status: string;
    code: ErrorCode;
    message?: string;
    details?: readonly { field: string; message: string }[];
  }
> = {
  MISSING_AUTHENTICATION_TOKEN: { status: '404', code: 100 },
  RESOURCE_NOT_FOUND: { status: '404', code: 100 },
  THROTTLED: { status: '429', code: 115 },
  QUOTA_EXCEEDED: { status: '429', code: 115 },
  // 107 with the catalogue's status (406), as the local gateway answers; the detail names the limit.
  REQUEST_TOO_LARGE: { status: '406', code: 107, details: [tooLargeDetail] },
  WAF_FILTERED: { status: '401', code: 103 },
  ACCESS_DENIED: { status: '403', code: 113 },
  DEFAULT_4XX: { status: '406', code: 107, message: 'The gateway could not accept this request' },
  DEFAULT_5XX: {
    status: '500',
    code: 2,
    message: 'Internal and unknown server error; quote request id $context.requestId to support',
  },
};

export interface ServiceApiProps {
  /** The API's name: the service stack's, also when the API lives in a nested stack. */
  readonly name: string;
  readonly routes: readonly Route[];
  readonly functionFor: (route: Route) => IFunction;
  readonly corsOrigins: readonly string[];
  readonly throttleRps: number;
  readonly throttleBurst: number;
  readonly logRetention: logs.RetentionDays;
  readonly stageName?: string;
}

const corsAllowHeaders = 'authorization, content-type, idempotency-key';
const corsExposeHeaders = 'x-request-id, retry-after, ratelimit-limit, ratelimit-remaining, ratelimit-reset';

/**
 * The REST API: one proxy method per route (looping over the route table), and on every known
 * path an OPTIONS method (202 / code 101 with CORS headers) and an ANY method (405 / code 102
 * with `allow`), both MOCK integrations, so no function runs for them. API Gateway prefers an
 * explicit method over ANY, so ANY catches exactly the methods a path does not have.
 */
export class ServiceApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly accessLogs: logs.LogGroup;
  readonly executionLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceApiProps) {
    super(scope, id);
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: props.logRetention });
    const stageName = props.stageName ?? 'prod';
    this.api = new apigateway.RestApi(this, 'Api', {
      // Named after the stack: the API's CloudWatch metrics (and so the 5xx alarm) are keyed by name.
      restApiName: props.name,
      description: 'Transactional e-mail API',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      cloudWatchRole: true,
      deployOptions: {
        stageName,
        tracingEnabled: true,
        throttlingRateLimit: props.throttleRps,
        throttlingBurstLimit: props.throttleBurst,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.jsonWithStandardFields({
          caller: false,
          httpMethod: true,
          ip: true,
          protocol: true,
          requestTime: true,
          resourcePath: true,
          responseLength: true,
          status: true,
          user: false,
        }),
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        // Request and response bodies (messages, tokens) never go to the execution logs.
        dataTraceEnabled: false,
        metricsEnabled: true,
      },
    });
    // API Gateway creates the execution-log group on first use, without retention; creating it
    // here first (same name) gives it one. The stage must wait for it.
    this.executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${stageName}`,
      retention: props.logRetention,
    });
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    const staticOrigin = staticAllowOrigin(props.corsOrigins);
    for (const [type, response] of Object.entries(gatewayResponses)) {
      this.api.addGatewayResponse(`Response${pascal(type)}`, {
        type: apigateway.ResponseType.of(type),
        statusCode: response.status,
        responseHeaders: {
          // The request id of the gateway, as every answer of the functions carries it.
          'x-request-id': 'context.requestId',
          'x-content-type-options': "'nosniff'",
          'access-control-expose-headers': `'${corsExposeHeaders}'`,
          ...(staticOrigin === undefined ? {} : { 'access-control-allow-origin': `'${staticOrigin}'` }),
        },
        templates: { 'application/json': envelope(response.code, response.message, response.details) },
      });
    }

    const byPath = new Map<string, Route[]>();
    for (const route of props.routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
    for (const [path, routesOnPath] of byPath) {
      const resource = this.api.root.resourceForPath(path);
      for (const route of routesOnPath) {
        resource.addMethod(
          route.method,
          new apigateway.LambdaIntegration(props.functionFor(route), {
            proxy: true,
            allowTestInvoke: false,
            // Routes that answer first and then record (after-response.ts) are streaming functions.
            ...(route.afterResponse ? { responseTransferMode: apigateway.ResponseTransferMode.STREAM } : {}),
          }),
          { operationName: route.id },
        );
      }
      const allow = routesOnPath.map((route) => route.method).join(', ');
      resource.addMethod(
        'OPTIONS',
        mockIntegration('202', envelope(101), props.corsOrigins, {
          'access-control-allow-methods': `${allow}, OPTIONS`,
          'access-control-allow-headers': corsAllowHeaders,
          'access-control-max-age': '600',
        }),
        mockMethodOptions('202', [
          'access-control-allow-methods',
          'access-control-allow-headers',
          'access-control-max-age',
        ]),
      );
      resource.addMethod(
        'ANY',
        mockIntegration('405', envelope(102, methodNotAllowedMessage(path, allow)), props.corsOrigins, {
          allow,
        }),
        mockMethodOptions('405', ['allow']),
      );
    }
  }
}

/** The allow-origin value a static response can carry: `*`, the only origin, or none for several. */
function staticAllowOrigin(origins: readonly string[]): string | undefined {
  if (origins.includes('*')) return '*';
  return origins.length === 1 ? origins[0] : undefined;
}

const commonMockHeaders = [
  'content-type',
  'x-content-type-options',
  'x-request-id',
  'access-control-allow-origin',
  'access-control-expose-headers',
  'vary',
];

function mockMethodOptions(status: string, extraHeaders: string[]): apigateway.MethodOptions {
  const headers = [...commonMockHeaders, ...extraHeaders];
  return {
    operationName: status === '202' ? 'cors-preflight' : 'method-not-allowed',
    methodResponses: [
      {
        statusCode: status,
        responseParameters: Object.fromEntries(
          headers.map((name) => [`method.response.header.${name}`, true]),
        ),
      },
    ],
  };
}

/**
 * A MOCK integration that always answers `status` with `body`. The allow-origin header echoes the
 * request's Origin only when it is one of the configured origins (a VTL response override);
 * with `*` configured it is the static `*`.
 */
function mockIntegration(
  status: string,
  body: string,
  corsOrigins: readonly string[],
  headers: Record<string, string>,
): apigateway.MockIntegration {
  const staticOrigin = corsOrigins.includes('*') ? '*' : undefined;
  const originCheck =
    staticOrigin === undefined
      ? [
          '#set($origin = $input.params().header.get("Origin"))',
          '#if("$origin" == "")#set($origin = $input.params().header.get("origin"))#end',
          ...corsOrigins.map(
            (origin) =>
              `#if("$origin" == "${origin}")#set($context.responseOverride.header.access-control-allow-origin = "${origin}")#end`,
          ),
        ].join('\n')
      : '';
  const responseParameters: Record<string, string> = {
    'method.response.header.content-type': "'application/json'",
    'method.response.header.x-content-type-options': "'nosniff'",
    'method.response.header.x-request-id': 'context.requestId',
    'method.response.header.access-control-expose-headers': `'${corsExposeHeaders}'`,
    'method.response.header.vary': "'Origin'",
    ...Object.fromEntries(
      Object.entries(headers).map(([name, value]) => [`method.response.header.${name}`, `'${value}'`]),
    ),
  };
  if (staticOrigin !== undefined) {
    responseParameters['method.response.header.access-control-allow-origin'] = `'${staticOrigin}'`;
  }
  return new apigateway.MockIntegration({
    passthroughBehavior: apigateway.PassthroughBehavior.WHEN_NO_MATCH,
    requestTemplates: { 'application/json': '{"statusCode": 200}' },
    integrationResponses: [
      {
        statusCode: status,
        responseParameters,
        responseTemplates: { 'application/json': originCheck === '' ? body : `${originCheck}\n${body}` },
      },
    ],
  });
}

function pascal(type: string): string {
  return type
    .toLowerCase()
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}
