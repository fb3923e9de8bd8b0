import type { IncomingMessage } from 'node:http';

/**
 * Test-only faults of the local host, so the tests can prove that a failing handler never takes the
 * host down. Off unless the host was started with LOCAL_FAULT_INJECTION=on (never set on AWS, where
 * this module is not bundled); then the request header `x-local-fault` picks one:
 * - `throw`: the handler throws a RangeError, as a runaway recursion does;
 * - `reject-later`: the handler answers, and a promise it left behind rejects with nobody listening;
 * - `crash`: an exception escapes to the event loop (an uncaught exception: the host stops).
 */
export type LocalFault = 'throw' | 'reject-later' | 'crash';

const faults: readonly LocalFault[] = ['throw', 'reject-later', 'crash'];

export function requestedFault(request: IncomingMessage): LocalFault | undefined {
  if (process.env.LOCAL_FAULT_INJECTION !== 'on') return undefined;
  const wanted = request.headers['x-local-fault'];
  return faults.find((fault) => fault === wanted);
}

/** Wraps a handler so that it fails the requested way. */
export function withFault<A extends unknown[], R>(
  fault: LocalFault | undefined,
  handler: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  if (fault === undefined) return handler;
  return async (...args: A) => {
    if (fault === 'throw') throw new RangeError('Maximum call stack size exceeded (injected fault)');
    const result = await handler(...args);
    if (fault === 'reject-later') void Promise.reject(new Error('a promise nobody awaited (injected fault)'));
    if (fault === 'crash')
      setImmediate(() => {
        throw new Error('an exception outside any request (injected fault)');
      });
    return result;
  };
}
