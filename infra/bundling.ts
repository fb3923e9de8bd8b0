import { basename, dirname, join, relative } from 'node:path';
import {
  type BundlingOptions,
  type ICommandHooks,
  LogLevel,
  OutputFormat,
  SourceMapMode,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';

/**
 * The one definition of how a function is bundled. The stack hands `bundlingFor(id)` to
 * NodejsFunction; the benchmark turns the same settings into esbuild options with
 * `esbuildOptionsFor`, so what it measures is what `cdk synth` builds.
 */

/**
 * ESM bundles need `require` for the CommonJS parts of their dependencies; without this banner
 * the SDK fails with `Dynamic require of "node:https" is not supported`.
 */
export const esmRequireBanner =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

const aliasDir = join(import.meta.dirname, 'bundle-aliases');

/**
 * Packages replaced in every bundle by a small module of ours (infra/bundle-aliases/), found with
 * esbuild's metafile (docs/decisions/0011-sender-bundle.md): mailauth's DKIM signer uses one libmime
 * function, `foldLines`, and libmime brings its charset tables, iconv-lite and encoding-japanese
 * (several times the signer's size) for decoding, which signing never does. The alias gives the signer nodemailer's identical
 * `foldLines`; MIME and DKIM stay nodemailer's and mailauth's. (joi and tldts, which only
 * verification needs, no longer reach the signer at all: patches/mailauth+7.1.0.patch gives it its
 * own helpers module, `lib/tools-core.js`.) Handlebars' optional `source-map` is left out the same
 * way (infra/bundle-aliases/source-map.ts).
 */
export const bundleAliases: Readonly<Record<string, string>> = {
  libmime: join(aliasDir, 'libmime.ts'),
  'source-map': join(aliasDir, 'source-map.ts'),
};

/**
 * Functions whose job is decoding mail keep the real packages: the inbound function parses
 * received messages (charsets through iconv-lite, encoded words), which is what libmime is for.
 */
export const decodesMail: ReadonlySet<string> = new Set(['inbound']);

/**
 * Worker threads a function starts, bundled as entries of their own beside `index.mjs` (the code
 * that starts one finds it there, from `index.mjs` or from `chunks/`): the template preview runs on
 * one (shared/templates/preview/pool.ts).
 */
export const workerEntries: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'template-render': {
    'template-preview-worker': join(import.meta.dirname, '..', 'shared', 'templates', 'preview', 'worker.ts'),
  },
};

const functionIdOf = (entry: string) => basename(dirname(entry));

/** The aliases of one function's bundle (`functions/<id>/handler.ts`). */
export function aliasesFor(entry: string): Record<string, string> {
  return decodesMail.has(basename(dirname(entry))) ? {} : { ...bundleAliases };
}

/**
 * Minified ESM for Node 22 with source maps (no sources inside), `module` entry points first so
 * the SDK's ESM builds tree-shake, and the AWS SDK bundled rather than taken from the runtime.
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
  esbuildArgs: Object.fromEntries(
    Object.entries(bundleAliases).map(([name, path]) => [`--alias:${name}`, path]),
  ),
} as const satisfies BundlingOptions;

/**
 * The bundle every function is deployed with: the same options plus code splitting, so modules a
 * function imports lazily (`import()`: the Encryption SDK, the SES or SMTP transport, postal-mime,
 * the credential providers) become chunks that Lambda loads only when a request needs them.
 * esbuild splits only with `--outdir`, and NodejsFunction always passes `--outfile`; so its
 * after-bundling hook replaces the single file with the split build of the same entry.
 */
export function esbuildOptionsFor(entry: string, outDir: string): BuildOptions {
  const b = functionBundling;
  const workersOf = workerEntries[functionIdOf(entry)] ?? {};
  return {
    entryPoints: [
      { in: entry, out: 'index' },
      ...Object.entries(workersOf).map(([name, path]) => ({ in: workerPathBeside(entry, path), out: name })),
    ],
    bundle: true,
    platform: 'node',
    format: b.format,
    target: b.target,
    outdir: outDir,
    splitting: true,
    entryNames: '[name]',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    minify: b.minify,
    sourcemap: b.sourceMap,
    sourcesContent: b.sourcesContent,
    external: [...b.externalModules],
    mainFields: [...b.mainFields],
    banner: { js: b.banner },
    logLevel: b.logLevel,
    alias: aliasesFor(entry),
  };
}

/**
 * A worker's module in the same tree as `entry`: the after-bundling hook builds from a copy of the
 * project (`inputDir`), so the worker is taken from that copy too.
 */
function workerPathBeside(entry: string, path: string): string {
  const projectRoot = join(import.meta.dirname, '..');
  const entryRoot = join(dirname(entry), '..', '..');
  return join(entryRoot, relative(projectRoot, path));
}

const shellQuote = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/** The esbuild command line for `esbuildOptionsFor` (what the after-bundling hook runs). */
export function esbuildCommandFor(esbuild: string, entry: string, outDir: string): string {
  const o = esbuildOptionsFor(entry, outDir);
  const args = [
    ...(o.entryPoints as Array<{ in: string; out: string }>).map((point) =>
      shellQuote(`${point.out}=${point.in}`),
    ),
    '--bundle',
    `--platform=${o.platform}`,
    `--format=${o.format}`,
    `--target=${o.target}`,
    `--outdir=${shellQuote(outDir)}`,
    '--splitting',
    `--entry-names=${shellQuote(String(o.entryNames))}`,
    `--chunk-names=${o.chunkNames}`,
    '--out-extension:.js=.mjs',
    ...(o.minify ? ['--minify'] : []),
    ...(o.sourcemap ? ['--sourcemap'] : []),
    `--sources-content=${String(o.sourcesContent)}`,
    `--main-fields=${(o.mainFields ?? []).join(',')}`,
    `--banner:js=${shellQuote(o.banner?.js ?? '')}`,
    `--log-level=${o.logLevel}`,
    ...Object.entries(o.alias ?? {}).map(([name, path]) => `--alias:${name}=${shellQuote(path)}`),
  ];
  return [shellQuote(esbuild), ...args].join(' ');
}

/** NodejsFunction's bundling for one function: the options above, then the split build. */
export function bundlingFor(entry: string, projectRoot: string): BundlingOptions {
  const commandHooks: ICommandHooks = {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => [
      `rm -rf ${shellQuote(outputDir)}/*`,
      esbuildCommandFor(
        join(inputDir, 'node_modules', '.bin', 'esbuild'),
        join(inputDir, relative(projectRoot, entry)),
        outputDir,
      ),
    ],
  };
  // NodejsFunction's own build (whose output the hook replaces) must resolve too: the same aliases.
  const esbuildArgs = Object.fromEntries(
    Object.entries(aliasesFor(entry)).map(([name, path]) => [`--alias:${name}`, path]),
  );
  return { ...functionBundling, esbuildArgs, commandHooks };
}
