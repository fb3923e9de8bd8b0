import { join } from 'node:path';
import { type BundlingOptions, LogLevel, OutputFormat, SourceMapMode } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/**
 * The one definition of how a function is bundled. The stack hands `functionBundling` to
 * NodejsFunction; the benchmark turns the same object into esbuild options with
 * `esbuildOptionsFor`, so what it measures is what `cdk synth` builds.
 */

/**
 * ESM bundles need `require` for the CommonJS parts of their dependencies; without this banner
 * the SDK fails with `Dynamic require of "node:https" is not supported`.
 */
export const esmRequireBanner =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

/**
 * Minified ESM for Node 22 with source maps (no sources inside), `module` entry points first so
 * the SDK's ESM builds tree-shake, and the AWS SDK bundled rather than taken from the runtime.
 *
 * No code splitting: NodejsFunction always passes `--outfile`, and esbuild splits only with
 * `--outdir`, so lazily imported modules (`import()`) stay in index.mjs but are evaluated only
 * when first imported (esbuild wraps them).
 */
export const functionBundling = {
  format: OutputFormat.ESM,
  target: 'node22',
  minify: true,
  sourceMap: true,
  sourceMapMode: SourceMapMode.DEFAULT,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  externalModules: [],
  bundleAwsSDK: true,
  banner: esmRequireBanner,
  forceDockerBundling: false,
  logLevel: LogLevel.WARNING,
} as const satisfies BundlingOptions;

/**
 * The esbuild options NodejsFunction derives from `functionBundling` (its `buildEsbuildArgs`:
 * `--bundle --platform=node --outfile=<dir>/index.mjs` plus one flag per option above).
 */
export function esbuildOptionsFor(entry: string, outDir: string): BuildOptions {
  const b = functionBundling;
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: b.format,
    target: b.target,
    outfile: join(outDir, b.format === OutputFormat.ESM ? 'index.mjs' : 'index.js'),
    minify: b.minify,
    sourcemap: b.sourceMap,
    sourcesContent: b.sourcesContent,
    external: [...b.externalModules],
    mainFields: [...b.mainFields],
    banner: { js: b.banner },
    logLevel: b.logLevel,
  };
}
