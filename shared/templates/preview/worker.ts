import { parentPort } from 'node:worker_threads';
import { type PreviewJob, runPreview } from './work.ts';

/**
 * The preview thread (pool.ts starts it): one job at a time, announcing each part as it starts so
 * that a job stopped at its deadline can be answered naming the part it was on.
 */
const port = parentPort;
if (port !== null) {
  port.on('message', (message: { id: number; job: PreviewJob }) => {
    runPreview(message.job, (part) => port.postMessage({ id: message.id, part })).then(
      (outcome) => port.postMessage({ id: message.id, outcome }),
      (error: unknown) =>
        port.postMessage({ id: message.id, failure: error instanceof Error ? error.message : String(error) }),
    );
  });
}
