import { Worker } from 'node:worker_threads';
import { RenderBudgetError } from '../model/render-budget.ts';
import type { Preview, PreviewJob, PreviewOutcome } from './work.ts';

/**
 * Previews run on worker threads (docs/security.md, "Limits"), so that a preview, however costly
 * within its budgets, never holds the thread that answers other requests (the local host runs
 * every function in one process; on Lambda it keeps the function's own deadline and memory).
 * Each worker has its own heap limit and each job a deadline: a job past either ends its worker
 * (a new one starts for the next job) and is answered 107 naming the part it was on.
 */

export interface PreviewPoolOptions {
  workers: number;
  deadlineMs: number;
  heapMb: number;
}

export const previewLimits: PreviewPoolOptions = { workers: 2, deadlineMs: 10_000, heapMb: 256 };

/**
 * The worker's module: beside this one in the source tree; in a bundle, an entry of its own
 * (`template-preview-worker.mjs`, infra/bundling.ts) next to `index.mjs`, while this code sits in
 * `index.mjs` or in `chunks/`.
 */
export const previewWorkerBundleName = 'template-preview-worker';
function workerUrl(): URL {
  const here = import.meta.url;
  if (here.endsWith('.ts')) return new URL('./worker.ts', here);
  return new URL(`${here.includes('/chunks/') ? '../' : './'}${previewWorkerBundleName}.mjs`, here);
}

interface Pending {
  id: number;
  job: PreviewJob;
  part: string;
  resolve: (preview: Preview) => void;
  reject: (error: unknown) => void;
}

interface Slot {
  worker: Worker | undefined;
  current: Pending | undefined;
  timer: NodeJS.Timeout | undefined;
}

export class PreviewPool {
  private readonly options: PreviewPoolOptions;
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private nextId = 1;

  constructor(options: PreviewPoolOptions = previewLimits) {
    this.options = options;
    this.slots = Array.from({ length: options.workers }, () => ({
      worker: undefined,
      current: undefined,
      timer: undefined,
    }));
  }

  run(job: PreviewJob): Promise<Preview> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, part: 'template', resolve, reject });
      this.dispatch();
    });
  }

  /** Ends every worker (tests; a function instance simply ends with its process). */
  async close(): Promise<void> {
    await Promise.all(
      this.slots.map((slot) => {
        const worker = slot.worker;
        slot.worker = undefined;
        return worker?.terminate();
      }),
    );
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.current !== undefined) continue;
      const next = this.queue.shift();
      if (next === undefined) return;
      this.start(slot, next);
    }
  }

  private start(slot: Slot, pending: Pending): void {
    slot.current = pending;
    const worker = slot.worker ?? this.spawn(slot);
    slot.timer = setTimeout(() => {
      this.finish(
        slot,
        new RenderBudgetError(
          pending.part,
          `The preview stopped at the ${pending.part} part after ${this.options.deadlineMs / 1000} s; simplify the template or the model`,
        ),
        true,
      );
    }, this.options.deadlineMs);
    worker.postMessage({ id: pending.id, job: pending.job });
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(workerUrl(), {
      resourceLimits: {
        maxOldGenerationSizeMb: this.options.heapMb,
        maxYoungGenerationSizeMb: 32,
        stackSizeMb: 4,
      },
    });
    // An idle worker never keeps the process alive.
    worker.unref();
    slot.worker = worker;
    worker.on(
      'message',
      (message: { id: number; part?: string; outcome?: PreviewOutcome; failure?: string }) => {
        const pending = slot.current;
        if (slot.worker !== worker || pending === undefined || pending.id !== message.id) return;
        if (message.part !== undefined) {
          pending.part = message.part;
        } else if (message.outcome !== undefined) {
          const outcome = message.outcome;
          this.finish(
            slot,
            outcome.ok ? outcome.preview : new RenderBudgetError(outcome.part, outcome.message),
            false,
          );
        } else {
          this.finish(slot, new Error(`template preview failed: ${message.failure ?? 'unknown'}`), false);
        }
      },
    );
    worker.on('error', (error: Error & { code?: string }) => {
      // A worker already replaced (stopped at a deadline) says nothing about the current job.
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      const pending = slot.current;
      if (pending === undefined) return;
      this.finish(
        slot,
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new RenderBudgetError(
              pending.part,
              `The preview of the ${pending.part} part needed more than ${this.options.heapMb} MB; simplify the template or the model`,
            )
          : error,
        false,
      );
    });
    worker.on('exit', () => {
      if (slot.worker !== worker) return;
      slot.worker = undefined;
      if (slot.current !== undefined) this.finish(slot, new Error('template preview worker exited'), false);
    });
    return worker;
  }

  private finish(slot: Slot, result: Preview | Error, stopWorker: boolean): void {
    const pending = slot.current;
    if (pending === undefined) return;
    clearTimeout(slot.timer);
    slot.current = undefined;
    slot.timer = undefined;
    if (stopWorker && slot.worker !== undefined) {
      const worker = slot.worker;
      slot.worker = undefined;
      void worker.terminate();
    }
    if (result instanceof Error) pending.reject(result);
    else pending.resolve(result);
    this.dispatch();
  }
}

/** The pool of a function instance, started on the first preview. */
let shared: PreviewPool | undefined;
export const previewPool = (): PreviewPool => {
  shared ??= new PreviewPool();
  return shared;
};
