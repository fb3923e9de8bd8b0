import type { APIGatewayProxyResult } from 'aws-lambda';
import { catalogue, type ErrorCode } from '../errors/catalogue.ts';
import type { ErrorDetail } from '../errors/service-error.ts';

export type Headers = Record<string, string>;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

export function jsonResponse(status: number, body: unknown, headers: Headers = {}): APIGatewayProxyResult {
  return {
    statusCode: status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

export function dataResponse<T>(data: T, status = 200, headers: Headers = {}): APIGatewayProxyResult {
  return jsonResponse(status, { data }, headers);
}

export function errorBody(code: ErrorCode, message?: string, details?: ErrorDetail[]): ErrorBody {
  const error: ErrorBody['error'] = { code, message: message ?? catalogue[code].message };
  if (details && details.length > 0) error.details = details;
  return { error };
}

export function errorResponse(
  code: ErrorCode,
  message?: string,
  details?: ErrorDetail[],
  headers: Headers = {},
): APIGatewayProxyResult {
  return jsonResponse(catalogue[code].status, errorBody(code, message, details), headers);
}
