import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { forbiddenReason, hostOf, type TargetPolicy, urlProblem } from './model/targets.ts';

/**
 * One POST to a webhook target (docs/webhooks.md, "Targets" and "The HTTP client"):
 * - SSRF-safe: the host name is resolved here, every address it resolves to is checked against the
 *   address rule, and the connection goes to the checked address (the socket's lookup is pinned to
 *   it), so the name cannot resolve to something else between the check and the connection.
 *   Redirects are never followed: a 3xx is an answer like any other non-2xx.
 * - One deadline covers all of it: the DNS lookup, connect, TLS, the response headers and the body.
 *   At most `maxResponseBytes` of the body are read; then, or at the deadline, or on any error, the
 *   socket is destroyed. No socket outlives its attempt.
 * - What a tenant sees of a failure (`error`) never reveals a resolved address or a port's state:
 *   connection refused, reset, unreachable, TLS failures and silence all read the same. The
 *   operator's log gets the precise cause (`cause`).
 */
export type Resolver = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

/** The body bytes read from an answer before the socket is closed: the status line is the answer. */
export const maxResponseBytes = 1024;

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefused';
  }
}

/** The tenant-facing text of an attempt that got no complete answer in time. */
export const noAnswer = (timeoutMs: number) =>
  `No complete answer within ${Math.round(timeoutMs / 1000)} s (the connection failed, was refused or timed out, or the answer was incomplete)`;

class DeadlineExceeded extends Error {}

/** Resolves with `promise`, or rejects with DeadlineExceeded at `deadline` (epoch ms). */
function before<T>(promise: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded()), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([promise, expiry]).finally(() => clearTimeout(timer));
}

/**
 * The address to connect to, after checking the URL and everything the name resolves to. The lookup
 * gives up at `deadline` (epoch ms); a name that does not resolve in time counts as not resolving.
 */
export async function resolveTarget(
  url: URL,
  policy: TargetPolicy,
  resolve: Resolver = systemResolver,
  deadline: number = Date.now() + 5_000,
): Promise<{ address: string; family: 4 | 6 }> {
  const problem = urlProblem(url.href, policy);
  if (problem !== undefined) throw new TargetRefused(`Target refused: ${problem}`);
  const host = hostOf(url);
  const literal = isIP(host);
  if (literal !== 0) return { address: host, family: literal as 4 | 6 };
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await before(resolve(host), deadline);
  } catch {
    throw new TargetRefused(`The host name ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new TargetRefused(`The host name ${host} does not resolve`);
  if (!policy.allowPrivate) {
    // Every address must pass: a name with one public and one private address is refused. The
    // answer names no address and no range: what a name resolves to stays the operator's to know.
    for (const { address } of addresses) {
      if (forbiddenReason(address) !== undefined) {
        throw new TargetRefused(`Target refused: ${host} resolves to a non-public address`);
      }
    }
  }
  const chosen = addresses[0] as { address: string; family: number };
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

export interface PostResult {
  statusCode?: number;
  /** Why there is no answer, as the tenant may see it. */
  error?: string;
  /** The precise cause, for the operator's log only (may name addresses and error codes). */
  cause?: string;
}

/**
 * POSTs `body` to `url` at the checked `address` and reads at most `maxResponseBytes` of the answer,
 * all before `deadline` (epoch ms). The socket is destroyed when the attempt ends, however it ends.
 */
export function postTo(
  url: URL,
  address: { address: string; family: 4 | 6 },
  headers: Record<string, string>,
  body: string,
  deadline: number,
  timeoutMs: number,
): Promise<PostResult> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | undefined;
    let read = 0;
    let request: ReturnType<typeof httpRequest> | undefined;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever happened, the socket goes now: no attempt leaves a connection behind.
      request?.destroy();
      resolve(result);
    };
    const timer = setTimeout(
      () =>
        finish({
          error: noAnswer(timeoutMs),
          cause:
            statusCode === undefined
              ? 'deadline before the response headers'
              : `deadline while reading the body (status ${statusCode}, ${read} bytes)`,
        }),
      Math.max(0, deadline - Date.now()),
    );
    request = send(
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
        statusCode = response.statusCode;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= maxResponseBytes) finish({ statusCode });
        });
        response.on('end', () => finish({ statusCode }));
        response.on('error', (error: NodeJS.ErrnoException) =>
          finish({ error: noAnswer(timeoutMs), cause: `response: ${error.code ?? error.message}` }),
        );
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => {
      finish({
        error: noAnswer(timeoutMs),
        cause: `${error.code ?? 'error'}: ${error.message}`.slice(0, 300),
      });
    });
    request.end(body);
  });
}

/**
 * One attempt, start to end, within `timeoutMs`: resolve and check the target, then POST. A
 * refused target (the URL or address rule, a name that does not resolve) is an answer-less attempt
 * whose `error` says why.
 */
export async function attemptPost(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: { policy: TargetPolicy; resolve: Resolver; timeoutMs: number; post?: typeof postTo },
): Promise<PostResult> {
  const deadline = Date.now() + options.timeoutMs;
  let address: { address: string; family: 4 | 6 };
  try {
    address = await resolveTarget(url, options.policy, options.resolve, deadline);
  } catch (error) {
    if (!(error instanceof TargetRefused)) throw error;
    return { error: error.message };
  }
  return (options.post ?? postTo)(url, address, headers, body, deadline, options.timeoutMs);
}
