import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { type ApiResponse, hostInfo } from './host.ts';

const projectRoot = join(import.meta.dirname, '..', '..');

/** What `npm start` writes to <DATA_DIR>/host.json (infra/local/start.ts). */
interface HostFile {
  url: string;
  env: Record<string, string>;
  issuer: string;
  audience: string;
  pid: number;
  emulators: { dynamo: { endpoint: string; pid?: number }; sqsS3: { endpoint: string } };
}

export interface SecondaryHost {
  url: string;
  dataDir: string;
  /** The environment its handlers run with (overrides included). */
  env: Record<string, string>;
  issuer: string;
  audience: string;
  privateJwk: JWK;
  /** Its own DynamoDB Local, whatever the handlers' environment points at. */
  dynamo: { endpoint: string; pid?: number };
  /** Its own fauxqs (SQS + S3), whatever the handlers' environment points at. */
  sqsS3: { endpoint: string };
  /** Kills its DynamoDB Local and waits until the port refuses connections. */
  killDynamo(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A second local host with a different configuration, for the cases the shared host of the test
 * run must not have (blocked networks, a tiny rate limit, a broken or missing database). It runs
 * `npm start`'s entry point in a child process on free ports with a fresh DATA_DIR, because the
 * handlers read their configuration from the process environment, exactly as on Lambda.
 * About 5 s to start: keep the number of these small and combine configurations.
 */
export async function startSecondaryHost(
  overrides: Record<string, string>,
  /** Runs before the host starts, e.g. to place its identity provider's signing key. */
  prepare?: (dataDir: string) => void,
  /** A DATA_DIR the caller owns (kept when the host stops), e.g. to restart a host on its state. */
  ownDataDir?: string,
): Promise<SecondaryHost> {
  const dataDir = ownDataDir ?? mkdtempSync(join(tmpdir(), 'svc-mail-secondary-'));
  const removeDataDir = () => {
    if (ownDataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  // host.json announces that the host is up: one left by an earlier run on this DATA_DIR must not.
  rmSync(join(dataDir, 'host.json'), { force: true });
  prepare?.(dataDir);
  const env: Record<string, string | undefined> = { ...process.env };
  // Nothing of the shared host may leak into the child: it provisions and describes its own.
  for (const name of Object.keys(hostInfo().env)) delete env[name];
  for (const name of ['AUTH_ISSUER', 'AUTH_AUDIENCE', 'AUTH_JWKS_URL']) delete env[name];
  Object.assign(env, {
    PORT: '0',
    IDP_PORT: '0',
    SUBMISSION_PORT: '0',
    SUBMISSIONS_PORT: '0',
    DATA_DIR: dataDir,
    LOCAL_STATE: 'memory',
    SEED_DOMAINS: '',
    LOG_FILE: join(dataDir, 'service.log'),
    ...overrides,
  });
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'infra/local/start.ts'], {
    cwd: projectRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const file = join(dataDir, 'host.json');
  try {
    await waitFor(
      () => existsSync(file),
      child,
      // Generous: on a loaded 2-core machine Java alone can take a minute; within the hook timeout.
      240_000,
      () => output,
    );
  } catch (error) {
    await stopChild(child, undefined);
    removeDataDir();
    throw error;
  }
  const described = JSON.parse(readFileSync(file, 'utf8')) as HostFile;
  const privateJwk = JSON.parse(readFileSync(join(dataDir, 'idp', 'signing-key.json'), 'utf8')) as JWK;
  const dynamo = described.emulators.dynamo;

  return {
    url: described.url,
    dataDir,
    env: described.env,
    issuer: described.issuer,
    audience: described.audience,
    privateJwk,
    dynamo,
    sqsS3: described.emulators.sqsS3,
    killDynamo: async () => {
      if (dynamo.pid === undefined)
        throw new Error('the secondary host did not report its DynamoDB Local pid');
      process.kill(dynamo.pid, 'SIGKILL');
      const port = Number(new URL(dynamo.endpoint).port);
      const deadline = Date.now() + 30_000;
      while (await accepts(port)) {
        if (Date.now() > deadline) throw new Error('DynamoDB Local still accepts connections after SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    stop: async () => {
      await stopChild(child, dynamo.pid);
      removeDataDir();
    },
  };
}

function waitFor(
  condition: () => boolean,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) return resolve();
      if (child.exitCode !== null || child.signalCode !== null) {
        return reject(
          new Error(`secondary host exited (${child.exitCode ?? child.signalCode}):\n${output()}`),
        );
      }
      if (Date.now() > deadline) return reject(new Error(`secondary host did not start:\n${output()}`));
      setTimeout(check, 100);
    };
    check();
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** SIGTERM lets the host stop its emulators; SIGKILL (and the Java child) if it does not in time. */
async function stopChild(child: ChildProcess, dynamoPid: number | undefined): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  if (dynamoPid !== undefined) {
    try {
      process.kill(dynamoPid, 'SIGKILL');
    } catch {
      // already gone, as it should be
    }
  }
}

/**
 * One request from a chosen local source address (e.g. 127.0.0.2, which Linux routes over the
 * loopback like 127.0.0.1), so a network rule can be tested without blocking every other caller.
 */
export function callFrom(
  localAddress: string,
  baseUrl: string,
  method: string,
  path: string,
): Promise<ApiResponse> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, localAddress }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === 'string') headers.set(name, value);
        }
        resolve({ status: response.statusCode ?? 0, headers, body, text });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}
