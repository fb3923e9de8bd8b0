import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Builds the web console (Vite) into console/dist when its sources changed since the last build:
 * `npm ci` runs it (postinstall), `npm start` and the test run call `ensureConsoleBuilt()`, so a
 * newcomer never runs a separate command. `npm run console:build` builds unconditionally.
 * The build goes to a temporary folder that then replaces dist/ whole, so a server reading dist/
 * never sees half of a build.
 */
const root = import.meta.dirname;
const projectRoot = join(root, '..');
export const consoleDistDir = join(root, 'dist');
const stampName = '.source-hash';

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** A hash of everything the build reads: the sources, the config and the locked dependencies. */
export function consoleSourceHash(): string {
  const hash = createHash('sha256');
  const files = [
    ...filesUnder(join(root, 'src')),
    join(root, 'index.html'),
    join(root, 'vite.config.ts'),
    join(projectRoot, 'clients', 'openapi.ts'),
    join(projectRoot, 'clients', 'svc-mail.ts'),
    join(projectRoot, 'package-lock.json'),
  ].sort();
  for (const file of files) {
    hash.update(relative(projectRoot, file));
    hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

export function consoleIsBuilt(): boolean {
  const stamp = join(consoleDistDir, stampName);
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === consoleSourceHash();
}

export async function buildConsole(): Promise<void> {
  const hash = consoleSourceHash();
  const { build } = await import('vite');
  const staging = join(root, `dist.tmp-${process.pid}`);
  try {
    await build({
      configFile: join(root, 'vite.config.ts'),
      build: { outDir: staging, emptyOutDir: true },
    });
    writeFileSync(join(staging, stampName), hash);
    rmSync(consoleDistDir, { recursive: true, force: true });
    try {
      renameSync(staging, consoleDistDir);
    } catch (error) {
      // Another process (a second host starting at the same moment) put the same build there first.
      if (!consoleIsBuilt()) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Builds the console unless dist/ already holds a build of the current sources. */
export async function ensureConsoleBuilt(log: (line: string) => void = () => undefined): Promise<void> {
  if (consoleIsBuilt()) return;
  log('building the web console (console/dist) …');
  const started = Date.now();
  await buildConsole();
  log(`web console built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  const run = process.argv.includes('--force') ? buildConsole() : ensureConsoleBuilt(log);
  run.catch((error: unknown) => {
    process.stderr.write(`console build failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
