import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { forbiddenReason, hostOf, type TargetPolicy, urlProblem } from '../../domain/webhooks/targets.ts';

/**
 * One POST to a webhook target, SSRF-safe (docs/webhooks.md, "Targets"): the host name is resolved
 * here, every address it resolves to is checked against the address rule, and the connection goes
 * to the checked address (the socket's lookup is pinned to it), so the name cannot resolve to
 * something else between the check and the connection. Redirects are never followed: a 3xx is an
 * answer like any other non-2xx.
 */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** The address to connect to, after checking the URL and everything the name resolves to. */
export async function resolveTarget(
  url: URL,
  policy: TargetPolicy,
  resolve: Resolver = systemResolver,
): Promise<{ address: string; family: 4 | 6 }> {
  const problem = urlProblem(url.href, policy);
  if (problem !== undefined) throw new TargetRefused(`Target refused: ${problem}`);
  const host = hostOf(url);
  const literal = isIP(host);
  if (literal !== 0) return { address: host, family: literal as 4 | 6 };
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await resolve(host);
  } catch (error) {
    throw new TargetRefused(
      `The host name ${host} does not resolve (${(error as { code?: string }).code ?? 'error'})`,
    );
  }
  if (addresses.length === 0) throw new TargetRefused(`The host name ${host} does not resolve`);
  if (!policy.allowPrivate) {
    // Every address must pass: a name with one public and one private address is refused.
    for (const { address } of addresses) {
      const reason = forbiddenReason(address);
      if (reason !== undefined) {
        throw new TargetRefused(`Target refused: ${host} resolves to a ${reason} (${address})`);
      }
    }
  }
  const chosen = addresses[0] as { address: string; family: number };
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export interface PostResult {
  statusCode?: number;
  /** Why there is no answer (timeout, refused connection, TLS, target refused). */
  error?: string;
}

/** POSTs `body` to `url` at the checked `address`, waiting at most `timeoutMs` for the answer. */
export function postTo(
  url: URL,
  address: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<PostResult> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const request = send(
      {
        protocol: url.protocol,
        hostname: hostOf(url),
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        agent: false,
        family: address.family,
        // Pinned: the connection goes to the address that was checked, whatever DNS says now.
        lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (options?.all === true) callback(null, [{ address: address.address, family: address.family }]);
          else callback(null, address.address, address.family);
        }) as never,
      },
      (response) => {
        response.resume();
        response.on('error', () => undefined);
        finish({ statusCode: response.statusCode });
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `No answer within ${Math.round(timeoutMs / 1000)} s` });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish({ error: `Connection failed: ${error.code ?? error.message}`.slice(0, 300) });
    });
    request.end(body);
  });
}
