import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = process.argv[2];
const { esbuildOptionsFor } = await import(join(root, 'infra/bundling.ts'));
const { readdirSync } = await import('node:fs');
const out: Record<string, [number, number]> = {};
for (const id of readdirSync(join(root, 'functions')).sort()) {
  const dir = mkdtempSync(join(tmpdir(), 'm-'));
  const r = await build({
    ...esbuildOptionsFor(join(root, 'functions', id, 'handler.ts'), dir),
    absWorkingDir: root,
    logLevel: 'error',
    metafile: true,
  });
  const outputs = r.metafile.outputs;
  const entry = Object.keys(outputs).find((k) => k.endsWith('index.mjs'))!;
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length) {
    const k = stack.pop()!;
    if (seen.has(k)) continue;
    seen.add(k);
    for (const i of outputs[k].imports)
      if (i.kind === 'import-statement' && outputs[i.path]) stack.push(i.path);
  }
  const start = [...seen].reduce((s, k) => s + outputs[k].bytes, 0);
  const total = Object.entries(outputs)
    .filter(([k]) => !k.endsWith('.map'))
    .reduce((s, [, o]) => s + o.bytes, 0);
  out[id] = [start, total];
}
console.log(JSON.stringify(out));
