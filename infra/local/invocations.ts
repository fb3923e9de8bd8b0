import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * What Lambda's REPORT lines say, for the local host: per function, its invocations and their summed
 * duration, the handler's own time as Lambda bills it (not the time a batch waited for a free
 * invocation). The benchmark reads the totals before and after a run (bench/meter.ts).
 */
export const invocationTotals = new Map<string, { count: number; ms: number }>();

/**
 * The function whose invocation the current asynchronous work belongs to. All handlers share one
 * process here; this tells the AWS call recorder (aws-call-recorder.ts) whose role a call needs.
 */
const invokedFunction = new AsyncLocalStorage<string>();

export function currentFunction(): string | undefined {
  return invokedFunction.getStore();
}

/** Runs `run` as an invocation of `functionId` (without counting it in the totals). */
export function asFunction<T>(functionId: string, run: () => Promise<T>): Promise<T> {
  return invokedFunction.run(functionId, run);
}

/** Runs one invocation of `functionId` and adds its duration to the totals. */
export async function timedInvocation<T>(functionId: string, run: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await asFunction(functionId, run);
  } finally {
    const total = invocationTotals.get(functionId) ?? { count: 0, ms: 0 };
    total.count += 1;
    total.ms += performance.now() - started;
    invocationTotals.set(functionId, total);
  }
}
