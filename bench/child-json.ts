import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Runs one of the benchmark's scripts in its own Node process and returns the JSON line it prints
 * last: the process's figures, taken away from the local host's event loop.
 */
export function childJson<T>(
  script: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', join(import.meta.dirname, script), ...args],
      { env: { ...process.env, ...env, NODE_OPTIONS: '' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      const lines = Buffer.concat(chunks).toString('utf8').trim().split('\n');
      if (code !== 0) return reject(new Error(`bench/${script} exited with ${code}`));
      try {
        resolve(JSON.parse(lines[lines.length - 1] as string) as T);
      } catch (error) {
        reject(error);
      }
    });
  });
}
