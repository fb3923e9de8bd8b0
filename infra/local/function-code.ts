import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { esbuildOptionsFor } from '../bundling.ts';

/**
 * Which code the local host runs for a function: its TypeScript source (functions/<id>/handler.ts,
 * the default), or the bundle `cdk synth` deploys, built by the same esbuild options as the
 * stack's after-bundling hook (infra/bundling.ts `esbuildOptionsFor`: ESM, code splitting into lazy
 * chunks, the createRequire banner, the aliases). `npm start -- --bundles` or `LOCAL_CODE=bundles`.
 */
export type FunctionCode = 'source' | 'bundles';

const projectRoot = join(import.meta.dirname, '..', '..');
let code: FunctionCode = 'source';
let bundlesDir: string | undefined;
const builds = new Map<string, Promise<string>>();

/**
 * Bundles go to a fresh folder under the system's temp directory, never inside the project: there
 * Node would find a package the bundle left out in the project's node_modules, and a bundle that
 * would fail on Lambda would pass here.
 */
export function useFunctionCode(wanted: FunctionCode): void {
  code = wanted;
  if (wanted === 'bundles') bundlesDir ??= mkdtempSync(join(tmpdir(), 'svc-mail-bundles-'));
}

export function functionCode(): FunctionCode {
  return code;
}

/** Removes the bundles built by this process. */
export function removeFunctionBundles(): void {
  if (bundlesDir !== undefined) rmSync(bundlesDir, { recursive: true, force: true });
  bundlesDir = undefined;
  builds.clear();
}

/** Builds a function's bundle once, on its first invocation (what `cdk synth` builds for it). */
function bundleOf(functionId: string): Promise<string> {
  let built = builds.get(functionId);
  if (built === undefined) {
    const outDir = join(bundlesDir as string, functionId);
    built = build(esbuildOptionsFor(join(projectRoot, 'functions', functionId, 'handler.ts'), outDir)).then(
      () => pathToFileURL(join(outDir, 'index.mjs')).href,
    );
    builds.set(functionId, built);
  }
  return built;
}

/** The module the host imports for a function: its source, or its bundle's index.mjs. */
export async function functionModuleUrl(functionId: string): Promise<string> {
  if (code === 'bundles') return bundleOf(functionId);
  return pathToFileURL(join(projectRoot, 'functions', functionId, 'handler.ts')).href;
}

/** Imports a function's handler as Lambda would: the module's `handler` export. */
export async function loadFunction<T>(functionId: string): Promise<T> {
  const module = (await import(await functionModuleUrl(functionId))) as { handler?: T };
  if (typeof module.handler !== 'function') throw new Error(`${functionId} exports no handler`);
  return module.handler;
}
