import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Route } from '../../shared/platform/http/route.ts';

/** What a REST API proxy event is made of: the local gateway and the handler tests fill it in. */
export interface ProxyRequest {
  route: Route;
  path: string;
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
  query: Record<string, string> | null;
  multiQuery: Record<string, string[]> | null;
  pathParameters: Record<string, string> | null;
  body: string | null;
  isBase64Encoded: boolean;
  /** The stage name, also used as the API id and the path prefix of `requestContext.path`. */
  stage: string;
  protocol: string;
  requestId: string;
  sourceIp: string;
  userAgent: string | null;
}

/** An API Gateway REST proxy event, in the shape API Gateway gives a Lambda proxy integration. */
export function proxyEvent(request: ProxyRequest): APIGatewayProxyEvent {
  const { route } = request;
  return {
    resource: route.path,
    path: request.path,
    httpMethod: route.method,
    headers: request.headers,
    multiValueHeaders: request.multiValueHeaders,
    queryStringParameters: request.query,
    multiValueQueryStringParameters: request.multiQuery,
    pathParameters: request.pathParameters,
    stageVariables: null,
    body: request.body,
    isBase64Encoded: request.isBase64Encoded,
    requestContext: {
      accountId: '000000000000',
      apiId: request.stage,
      authorizer: undefined,
      protocol: request.protocol,
      httpMethod: route.method,
      path: `/${request.stage}${request.path}`,
      stage: request.stage,
      requestId: request.requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.id,
      resourcePath: route.path,
      identity: {
        sourceIp: request.sourceIp,
        userAgent: request.userAgent,
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        user: null,
        userArn: null,
      },
    },
  };
}
