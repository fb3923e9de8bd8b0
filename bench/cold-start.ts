import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { esbuildOptionsFor } from '../infra/bundling.ts';
import { entryOf } from '../infra/stack/service-function.ts';
import { type Figure, figure, progress } from './stats.ts';

/**
 * Cold start: every function bundled with the stack's own esbuild options (infra/bundling.ts),
 * next to a baseline bundle that imports only the same third-party packages (Middy, jose, the SDK
 * clients) and does nothing else, built with the same options. Import time is the wall time of a
 * fresh `node` process that imports the bundle, minus that of a process that imports nothing.
 */

/** The packages the baseline may import, and what it imports from each (what a handler needs). */
const baselinePackages: Record<string, string> = {
  '@middy/core': "import middy from '@middy/core'; keep.push(middy);",
  jose: "import { createRemoteJWKSet, jwtVerify } from 'jose'; keep.push(createRemoteJWKSet, jwtVerify);",
  '@aws-sdk/client-dynamodb':
    "import { DynamoDBClient } from '@aws-sdk/client-dynamodb'; keep.push(DynamoDBClient);",
  '@aws-sdk/lib-dynamodb':
    "import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb'; keep.push(DynamoDBDocumentClient);",
  '@aws-sdk/client-sqs': "import { SQSClient } from '@aws-sdk/client-sqs'; keep.push(SQSClient);",
  '@aws-sdk/client-s3': "import { S3Client } from '@aws-sdk/client-s3'; keep.push(S3Client);",
  '@aws-sdk/client-kms': "import { KMSClient } from '@aws-sdk/client-kms'; keep.push(KMSClient);",
  '@aws-sdk/client-sesv2': "import { SESv2Client } from '@aws-sdk/client-sesv2'; keep.push(SESv2Client);",
};

export interface ColdStartRow {
  id: string;
  /** Bytes loaded at start: index.mjs and the chunks it imports statically (infra/bundling.ts splits). */
  bytes: number;
  chunkBytes: number;
  /** If the same build used code splitting: bytes loaded at start (index.mjs and its static chunks) and lazily. */
  splitMainBytes: number;
  splitChunkBytes: number;
  baselineBytes: number;
  baselinePackages: string[];
  /** Bytes per package in the bundle (top few), from the metafile. */
  topInputs: Array<[string, number]>;
  importMs: Figure;
  baselineImportMs: Figure;
  /** Per run: function import / baseline import, taken in the same round. */
  ratio: Figure;
  /** Cross-check: the process's wall time minus the empty process's, same round. */
  wallNetMs: Figure;
  emptyProcessMs: Figure;
}

function packageOf(input: string): string {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  return match ? (match[1] as string) : 'own code';
}

/** Bytes per package in the given outputs (default: all of them). */
function inputsByPackage(metafile: Metafile, only?: ReadonlySet<string>): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const [name, output] of Object.entries(metafile.outputs)) {
    if (only !== undefined && !only.has(name)) continue;
    for (const [input, info] of Object.entries(output.inputs)) {
      const name = packageOf(input);
      sizes.set(name, (sizes.get(name) ?? 0) + info.bytesInOutput);
    }
  }
  return sizes;
}

/** With code splitting: the entry and the chunks it imports statically (transitively), and the rest. */
function startBytes(metafile: Metafile): { atStart: number; lazy: number; startFiles: Set<string> } {
  const outputs = metafile.outputs;
  // Lazily imported modules are entry points of their own; the function's entry is index.mjs.
  const entry = Object.keys(outputs).find((name) => name.endsWith('/index.mjs')) as string;
  const seen = new Set<string>([entry]);
  const queue = [entry];
  while (queue.length > 0) {
    const current = queue.pop() as string;
    for (const imported of outputs[current]?.imports ?? []) {
      if (imported.kind === 'import-statement' && !imported.external && !seen.has(imported.path)) {
        seen.add(imported.path);
        queue.push(imported.path);
      }
    }
  }
  let atStart = 0;
  let lazy = 0;
  for (const [name, output] of Object.entries(outputs)) {
    if (!name.endsWith('.mjs')) continue;
    if (seen.has(name)) atStart += output.bytes;
    else lazy += output.bytes;
  }
  return { atStart, lazy, startFiles: seen };
}

/**
 * One fresh process that imports `file` (or nothing, for the empty-process baseline). Answers the
 * process's wall time and the import's own time measured inside it (performance.now() around the
 * `import()`): the second is the first minus the empty process, without the noise of process
 * creation on a busy 2-core machine.
 */
function timeProcess(
  file: string | undefined,
  env: Record<string, string>,
): Promise<{ wallMs: number; importMs: number }> {
  const code =
    file === undefined
      ? 'process.stdout.write("0")'
      : `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, ...env, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (status) => {
      if (status !== 0) reject(new Error(`import of ${file} failed: ${stderr.slice(0, 500)}`));
      else resolve({ wallMs: performance.now() - started, importMs: Number(stdout) });
    });
  });
}

export interface BuiltFunction {
  id: string;
  dir: string;
}

export async function buildBundles(ids: readonly string[], outRoot: string): Promise<BuiltFunction[]> {
  const built: BuiltFunction[] = [];
  for (const id of ids) {
    const dir = join(outRoot, id);
    await build(esbuildOptionsFor(entryOf(id), dir));
    built.push({ id, dir });
  }
  return built;
}

export async function coldStart(
  ids: readonly string[],
  outRoot: string,
  runs: number,
  env: Record<string, string>,
): Promise<ColdStartRow[]> {
  const prepared: Array<
    Omit<ColdStartRow, 'importMs' | 'baselineImportMs' | 'ratio' | 'wallNetMs' | 'emptyProcessMs'> & {
      file: string;
      baselineFile: string;
    }
  > = [];
  for (const id of ids) {
    progress(`cold start: bundling ${id} and its baseline`);
    const dir = join(outRoot, id);
    const result = await build({ ...esbuildOptionsFor(entryOf(id), dir), metafile: true });
    const split = startBytes(result.metafile);
    const sizes = inputsByPackage(result.metafile, split.startFiles);
    const used = Object.keys(baselinePackages).filter((name) => sizes.has(name));
    const baselineDir = join(outRoot, `${id}.baseline`);
    mkdirSync(baselineDir, { recursive: true });
    const baselineEntry = join(baselineDir, 'entry.mjs');
    writeFileSync(
      baselineEntry,
      `export const keep = [];\n${used.map((name) => baselinePackages[name]).join('\n')}\nexport const handler = async () => keep.length;\n`,
    );
    // The baseline resolves packages from the project, like the functions.
    const baseline = await build({
      ...esbuildOptionsFor(baselineEntry, baselineDir),
      nodePaths: [join(import.meta.dirname, '..', 'node_modules')],
      metafile: true,
    });
    // The stack deploys the split build (infra/bundling.ts): what loads at start is index.mjs and
    // the chunks it imports statically; the rest loads on the first import() that needs it.
    prepared.push({
      id,
      bytes: split.atStart,
      chunkBytes: split.lazy,
      splitMainBytes: split.atStart,
      splitChunkBytes: split.lazy,
      baselineBytes: startBytes(baseline.metafile).atStart,
      baselinePackages: used,
      topInputs: [...sizes.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5),
      file: join(dir, 'index.mjs'),
      baselineFile: join(baselineDir, 'index.mjs'),
    });
  }

  type Samples = { own: number[]; base: number[]; ratio: number[]; wallOwn: number[]; empty: number[] };
  const samples = new Map<string, Samples>();
  for (const row of prepared) samples.set(row.id, { own: [], base: [], ratio: [], wallOwn: [], empty: [] });
  // One warm-up round (file cache), then rounds in which every function is measured side by side
  // with its baseline and an empty process.
  for (let round = 0; round <= runs; round++) {
    if (round > 0) progress(`cold start: import round ${round}/${runs}`);
    for (const row of prepared) {
      const empty = await timeProcess(undefined, env);
      const own = await timeProcess(row.file, env);
      const base = await timeProcess(row.baselineFile, env);
      if (round === 0) continue;
      const entry = samples.get(row.id) as Samples;
      entry.own.push(own.importMs);
      entry.base.push(base.importMs);
      entry.ratio.push(own.importMs / Math.max(base.importMs, 0.1));
      entry.wallOwn.push(Math.max(0, own.wallMs - empty.wallMs));
      entry.empty.push(empty.wallMs);
    }
  }
  return prepared.map(({ file: _file, baselineFile: _baselineFile, ...row }) => {
    const entry = samples.get(row.id) as Samples;
    return {
      ...row,
      importMs: figure(entry.own),
      baselineImportMs: figure(entry.base),
      ratio: figure(entry.ratio),
      wallNetMs: figure(entry.wallOwn),
      emptyProcessMs: figure(entry.empty),
    };
  });
}
