import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, it, vi } from 'vitest';

/**
 * `npm start` when it cannot start: it checks its ports before starting anything, stops every
 * child it started when a later step fails (DynamoDB Local's Java process was left behind), and
 * explains a missing Java instead of printing a stack trace. Each case runs the real entry point
 * (infra/local/start.ts) in a child process with its own DATA_DIR.
 */
const projectRoot = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];

function freshDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-mail-start-'));
  dirs.push(dir);
  return dir;
}

function runStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'infra/local/start.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      IDP_PORT: '0',
      SUBMISSION_PORT: '0',
      SUBMISSIONS_PORT: '0',
      SEED_DOMAINS: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** Command lines of running processes that mention `text` (DynamoDB Local's carry its DATA_DIR). */
function processesMentioning(text: string): string[] {
  const listing = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  return listing.split('\n').filter((line) => line.includes(text) && !line.includes('ps -eo'));
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm start that cannot start', () => {
  it('checks PORT before starting anything and names the variable', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = freshDataDir();
    try {
      const result = await runStart({ PORT: String(port), DATA_DIR: dataDir });
      assert.equal(result.code, 1, result.output);
      assert.match(result.output, new RegExp(`port ${port} is in use: set PORT`));
      assert.doesNotMatch(result.output, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(result.output, /starting DynamoDB Local/, 'nothing was started');
      assert.deepEqual(processesMentioning(dataDir), []);
    } finally {
      blocker.close();
    }
  });

  it('checks SUBMISSION_PORT and SUBMISSIONS_PORT before starting anything and names them', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = freshDataDir();
    try {
      for (const variable of ['SUBMISSION_PORT', 'SUBMISSIONS_PORT']) {
        const result = await runStart({ PORT: '0', [variable]: String(port), DATA_DIR: dataDir });
        assert.equal(result.code, 1, result.output);
        assert.match(result.output, new RegExp(`port ${port} is in use: set ${variable}`));
        assert.doesNotMatch(result.output, /starting DynamoDB Local/, 'nothing was started');
      }
    } finally {
      blocker.close();
    }
  });

  it('stops DynamoDB Local (Java) and every other part when a later step fails', async () => {
    const dataDir = freshDataDir();
    const result = await runStart({
      PORT: '0',
      DATA_DIR: dataDir,
      LOCAL_STATE: 'persistent',
      SEED_DOMAINS: 'not-a-pair',
    });
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /starting DynamoDB Local/, 'the emulators had started');
    assert.match(result.output, /SEED_DOMAINS entry "not-a-pair"/);
    assert.doesNotMatch(result.output, /\n\s+at /, 'no stack trace');
    // DynamoDB Local's command line names its database folder inside DATA_DIR.
    await vi.waitFor(
      () => assert.deepEqual(processesMentioning(dataDir), [], 'no process of this start is left behind'),
      { timeout: 5_000, interval: 100 },
    );
  });

  it('prints the Java install command, not a stack trace, when there is no java', async () => {
    const result = await runStart({
      PORT: '0',
      DATA_DIR: freshDataDir(),
      // Only node itself on PATH: no java.
      PATH: dirname(process.execPath),
    });
    assert.equal(result.code, 1, result.output);
    assert.match(result.output, /apt-get install -y openjdk-17-jre-headless/);
    assert.doesNotMatch(result.output, /\n\s+at /, 'no stack trace');
  });
});
