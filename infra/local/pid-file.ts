import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from './free-port.ts';

/**
 * `<DATA_DIR>/host.pid`: which host process runs on this data folder and which DynamoDB Local it
 * started. A host killed without a chance to clean up (SIGKILL, a power cut of the terminal) leaves
 * its Java process running; the next start on the same folder finds it here and stops it, so two
 * DynamoDB Locals never share one database file.
 */
interface PidFile {
  host_pid: number;
  dynamo_pid?: number;
}

const fileName = 'host.pid';

function read(dataDir: string): PidFile | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, fileName), 'utf8')) as PidFile;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process's command line, or '' when it is gone or cannot be read. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    const probe = spawnSync('ps', ['-o', 'command=', '-p', String(pid)], { encoding: 'utf8' });
    return probe.status === 0 ? probe.stdout : '';
  }
}

function isDynamoDbLocal(pid: number): boolean {
  return isAlive(pid) && commandLine(pid).includes('DynamoDBLocal');
}

async function waitUntilGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/**
 * Before a start: refuses when another live host owns this folder, and stops a DynamoDB Local
 * that a host which no longer runs left behind.
 */
export async function claimDataDir(dataDir: string, log: (line: string) => void): Promise<void> {
  const earlier = read(dataDir);
  if (earlier === undefined) return;
  const hostAlive =
    earlier.host_pid !== process.pid &&
    isAlive(earlier.host_pid) &&
    /node/.test(commandLine(earlier.host_pid));
  if (hostAlive) {
    throw new StartupError(
      `another local host (pid ${earlier.host_pid}) is running on ${dataDir}: stop it (Ctrl+C in its terminal, or kill ${earlier.host_pid}), or set DATA_DIR to another folder`,
    );
  }
  const stale = earlier.dynamo_pid;
  if (stale !== undefined && isDynamoDbLocal(stale)) {
    log(`stopping DynamoDB Local (pid ${stale}) left running by an earlier host on ${dataDir}`);
    process.kill(stale, 'SIGTERM');
    if (!(await waitUntilGone(stale, 10_000))) {
      process.kill(stale, 'SIGKILL');
      if (!(await waitUntilGone(stale, 10_000)))
        throw new StartupError(
          `DynamoDB Local (pid ${stale}) from an earlier run does not stop: kill ${stale}`,
        );
    }
  }
  rmSync(join(dataDir, fileName), { force: true });
}

export function recordHost(dataDir: string, dynamoPid: number | undefined): void {
  const content: PidFile = {
    host_pid: process.pid,
    ...(dynamoPid === undefined ? {} : { dynamo_pid: dynamoPid }),
  };
  writeFileSync(join(dataDir, fileName), `${JSON.stringify(content)}\n`);
}

/** After a clean stop; only the file this process wrote. */
export function releaseDataDir(dataDir: string): void {
  if (read(dataDir)?.host_pid === process.pid) rmSync(join(dataDir, fileName), { force: true });
}

/**
 * The last resort when the host process ends without stopping its parts (an uncaught exception):
 * synchronous, so it can run in an 'exit' listener.
 */
export function killRecordedDynamo(dataDir: string): void {
  const recorded = read(dataDir);
  if (recorded?.host_pid !== process.pid || recorded.dynamo_pid === undefined) return;
  if (isDynamoDbLocal(recorded.dynamo_pid)) process.kill(recorded.dynamo_pid, 'SIGKILL');
  rmSync(join(dataDir, fileName), { force: true });
}
