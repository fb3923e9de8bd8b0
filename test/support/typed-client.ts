import { createSvcMailClient, type SvcMailClient } from '../../clients/svc-mail.ts';
import { openApiProblems } from './contract.ts';
import { ContractViolation, hostInfo } from './host.ts';

/**
 * The typed client (clients/svc-mail.ts) pointed at the test host. Its fetch checks every answer
 * against docs/openapi.json exactly as `call()` does, so a typed call cannot hide a drift either.
 */
export function typedClient(token?: string): SvcMailClient {
  return createSvcMailClient({
    baseUrl: hostInfo().url,
    ...(token === undefined ? {} : { token }),
    fetch: async (request: Request) => {
      const response = await fetch(request);
      const text = await response.clone().text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
      const problems = openApiProblems(request.method, new URL(request.url).pathname, {
        status: response.status,
        headers: response.headers,
        body,
        text,
      });
      if (problems.length > 0) throw new ContractViolation(problems);
      return response;
    },
  });
}
