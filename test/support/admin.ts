import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { runAdmin } from '../../infra/admin/cli.ts';
import { hostInfo } from './host.ts';

export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

const projectRoot = join(import.meta.dirname, '..', '..');

/**
 * `npm run admin -- …` as an operator runs it: its own process, configured by `env` alone (none of
 * the test's own variables). For what only a process shows: the exit code, and a target found
 * through the environment or `<DATA_DIR>/host.json`.
 */
export function adminProcess(
  args: string[],
  env: Record<string, string> = hostInfo().env,
): Promise<AdminRun> {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of Object.keys(hostInfo().env)) delete base[name];
  const child = spawn(
    process.execPath,
    ['--disable-warning=ExperimentalWarning', 'infra/admin/cli.ts', ...args],
    {
      cwd: projectRoot,
      env: { ...base, ...env },
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

/**
 * The same command in this process (the test has adopted the host's environment with
 * `useHostEnvironment`): what the process would print, without starting one per call.
 */
export async function adminCommand(args: string[]): Promise<AdminRun> {
  const result = await runAdmin(args);
  return {
    code: result.code,
    stdout: result.out === undefined ? '' : `${result.out}\n`,
    stderr: result.err === undefined ? '' : `${result.err}\n`,
  };
}
