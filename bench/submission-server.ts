import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TlsMaterial } from '../submission/certificate.ts';
import { statusField } from './process-status.ts';

/**
 * The SMTP submission server as a process of its own (bench/submission-process.ts running
 * submission/main.ts), against a given API: its STARTTLS port, and its memory as the kernel counts
 * it (/proc/<pid>/status) beside its V8 heap.
 */
export interface SubmissionMemory {
  /** Resident set now (VmRSS), bytes. */
  rss: number;
  /** Peak resident set since start or the last `resetPeak` (VmHWM), bytes. */
  peakRss: number;
  heapUsed: number;
  heapTotal: number;
}

export interface SubmissionProcess {
  port: number;
  pid: number;
  memory(): Promise<SubmissionMemory>;
  /** Starts the peak (VmHWM) anew; false where the kernel does not allow it. */
  resetPeak(): boolean;
  stop(): Promise<void>;
}

export async function startSubmissionProcess(options: {
  apiUrl: string;
  tls: TlsMaterial;
  env?: Record<string, string>;
}): Promise<SubmissionProcess> {
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', join(import.meta.dirname, 'submission-process.ts')],
    {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        ...options.env,
        API_URL: options.apiUrl,
        TLS_CERT: options.tls.cert,
        TLS_KEY: options.tls.key,
        SUBMISSION_PORT: '0',
        SUBMISSIONS_PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Its structured log lines are read and dropped, as a log collector would take them.
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`the submission process exited (${code}) before listening`)),
    );
    lines.on('line', (line) => {
      if (!line.includes('smtp submission listening')) return;
      resolve((JSON.parse(line) as { port: number }).port);
    });
  });
  const pid = child.pid as number;
  return {
    port,
    pid,
    async memory() {
      const heap = await new Promise<NodeJS.MemoryUsage>((resolve) => {
        child.once('message', (usage) => resolve(usage as NodeJS.MemoryUsage));
        child.send('memory');
      });
      return {
        rss: statusField(pid, 'VmRSS'),
        peakRss: statusField(pid, 'VmHWM'),
        heapUsed: heap.heapUsed,
        heapTotal: heap.heapTotal,
      };
    },
    resetPeak() {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        return true;
      } catch {
        return false;
      }
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      lines.close();
    },
  };
}
