import type { MiddlewareObj } from '@middy/core';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

/**
 * Parses the body as JSON → 106 when it is not. An absent body parses as `{}` so that the
 * validator, not the parser, reports missing fields. Keys that could pollute prototypes are dropped.
 */
export function jsonBody(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'jsonBody',
    before: ({ event }) => {
      const raw =
        event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
      if (raw === null || raw === undefined || raw.trim() === '') {
        event.jsonBody = {};
        return;
      }
      const contentType = event.headers['content-type'];
      if (contentType !== undefined && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
        throw new ServiceError(Code.InvalidJson, 'Content-Type must be application/json');
      }
      try {
        event.jsonBody = JSON.parse(raw, (key, value) => (key === '__proto__' ? undefined : value));
      } catch {
        throw new ServiceError(Code.InvalidJson);
      }
    },
  };
}
