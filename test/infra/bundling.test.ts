import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { describe, it } from 'vitest';
import { bundleAliases, decodesMail, esbuildOptionsFor } from '../../infra/bundling.ts';
import { entryOf, esmRequireBanner } from '../../infra/stack/service-function.ts';
import { routes } from '../../shared/routes.ts';
import { workers } from '../../shared/workers.ts';
import { testSigningKey, verifyDkimOffline } from '../support/dkim-offline.ts';
import { functionLogicalId, resourcesOfType, synthService } from '../support/infra.ts';

// The one place the infra tests run esbuild: every function, once, as `cdk synth` does.
const { app, template } = synthService({ bundle: true });
const assemblyDir = app.synth().directory;
const functions = resourcesOfType(template, 'AWS::Lambda::Function');
const functionIds = [...routes.map((route) => route.id), ...workers.map((worker) => worker.id)];

function bundleDir(functionId: string): string {
  const fn = functions[functionLogicalId(template, functionId)];
  return join(assemblyDir, fn?.Metadata['aws:asset:path'] as string);
}

describe('function bundles (local esbuild, no Docker)', () => {
  for (const id of functionIds) {
    it(`${id}: minified ESM with the createRequire banner, a source map and the AWS SDK inside`, () => {
      const dir = bundleDir(id);
      const code = readFileSync(join(dir, 'index.mjs'), 'utf8');
      assert.ok(code.startsWith(esmRequireBanner), 'banner missing');
      assert.ok(existsSync(join(dir, 'index.mjs.map')), 'source map missing');
      assert.match(code, /\/\/# sourceMappingURL=index\.mjs\.map\s*$/);
      assert.doesNotMatch(code, /(from|import\()\s*["']@aws-sdk\//, 'imports the SDK from the runtime');
      const fn = functions[functionLogicalId(template, id)];
      assert.equal(fn?.Properties.Handler, 'index.handler');
      assert.equal(fn?.Properties.Runtime, 'nodejs22.x');
      assert.deepEqual(fn?.Properties.Architectures, ['arm64']);
      process.stdout.write(`# ${id}: ${(statSync(join(dir, 'index.mjs')).size / 1024).toFixed(0)} KiB\n`);
    });
  }

  it('sender: split into chunks, without joi or the iconv-lite tables, and it loads', async () => {
    const dir = bundleDir('sender');
    const files = (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.mjs'));
    assert.ok(
      files.some((name) => name.startsWith('chunks/')),
      'no chunks: code splitting is off',
    );
    const code = files.map((name) => readFileSync(join(dir, name), 'utf8')).join('\n');
    assert.ok(!code.includes('"any.required"'), 'joi is bundled');
    assert.ok(!code.includes('cp936'), 'iconv-lite tables are bundled');
    const module = (await import(pathToFileURL(join(dir, 'index.mjs')).href)) as { handler: unknown };
    assert.equal(typeof module.handler, 'function');
  });

  it('template-render: the preview worker is an entry beside index.mjs, found from the bundle, and renders', async () => {
    const dir = bundleDir('template-render');
    const worker = join(dir, 'template-preview-worker.mjs');
    assert.ok(existsSync(worker), 'no template-preview-worker.mjs beside index.mjs');
    assert.ok(readFileSync(join(dir, 'index.mjs'), 'utf8').includes('template-preview-worker'));
    const thread = new Worker(worker);
    const outcome = await new Promise<unknown>((resolve, reject) => {
      thread.on('message', (message: { outcome?: unknown }) => {
        if (message.outcome !== undefined) resolve(message.outcome);
      });
      thread.on('error', reject);
      thread.postMessage({
        id: 1,
        job: {
          template: { parts: { subject: 'Hi {{a}}', html: '<p>{{a}}</p>', text: null } },
          model: { a: 'Ada' },
        },
      });
    }).finally(() => thread.terminate());
    assert.deepEqual(outcome, {
      ok: true,
      preview: {
        subject: 'Hi Ada',
        html: '<p>Ada</p>',
        text: 'Ada',
        errors: [],
        suggested_model: { a: 'a_Value' },
      },
    });
  });

  // One metafile per function, shared by the two tests below.
  const metafiles = new Map<string, Promise<Metafile>>();
  const metafileOf = (id: string): Promise<Metafile> => {
    let pending = metafiles.get(id);
    if (pending === undefined) {
      const outDir = mkdtempSync(join(tmpdir(), `meta-${id}-`));
      pending = build({ ...esbuildOptionsFor(entryOf(id), outDir), write: false, metafile: true })
        .then((result) => result.metafile)
        .finally(() => rmSync(outDir, { recursive: true, force: true }));
      metafiles.set(id, pending);
    }
    return pending;
  };

  // Bundles every function again: 37 s on a quiet run, over a minute on a busy 2-core machine.
  it('aliased packages (infra/bundle-aliases) are reached only through the library they serve, and no bundle holds libmime but the inbound one, nor source-map', {
    timeout: 240_000,
  }, async () => {
    // Each alias stands in for what one library calls (libmime: mailauth's signer folds a header;
    // source-map: Handlebars' code generator, which then uses its own stand-in); our own code must
    // not import them, and libmime itself (with iconv-lite and encoding-japanese) stays out, except
    // where decoding received mail is the job (the inbound function: its charsets need them).
    const servedBy: Record<string, RegExp> = {
      libmime: /node_modules\/mailauth\//,
      'source-map': /node_modules\/handlebars\//,
    };
    const aliasOf = new Map(
      Object.entries(bundleAliases).map(([name, path]) => [relative(process.cwd(), path), name]),
    );
    const reached = new Set<string>();
    for (const id of decodesMail) {
      const inputs = Object.keys((await metafileOf(id)).inputs);
      assert.ok(
        inputs.some((file) => /node_modules\/iconv-lite\//.test(file)),
        `${id} decodes charsets with iconv-lite`,
      );
    }
    for (const id of functionIds.filter((candidate) => !decodesMail.has(candidate))) {
      for (const [file, input] of Object.entries((await metafileOf(id)).inputs)) {
        assert.doesNotMatch(
          file,
          /node_modules\/(libmime|iconv-lite|encoding-japanese|source-map)\//,
          `${id} bundles ${file}`,
        );
        for (const imported of input.imports) {
          const alias = aliasOf.get(imported.path);
          if (alias === undefined) continue;
          reached.add(alias);
          assert.match(file, servedBy[alias] as RegExp, `${id}: ${file} imports ${imported.original}`);
        }
      }
    }
    assert.deepEqual(
      [...reached].sort(),
      Object.keys(servedBy).sort(),
      'the sender reaches the libmime alias through mailauth, the template functions the source-map one through Handlebars',
    );
  });

  it('no CommonJS require() of an ESM module of the AWS SDK or the Encryption SDK, in any bundle', async () => {
    // A require() of an ES module makes esbuild wrap it, and everything it imports, in lazy
    // initialisers: @aws-crypto/client-node's CommonJS entry did that to the whole SDK core of
    // every function that seals DKIM keys or webhook secrets, even where the Encryption SDK itself
    // was a lazy chunk (the sender's cold import fell from about 1.9 to 1.5 × its baseline without it).
    for (const id of functionIds) {
      for (const [file, input] of Object.entries((await metafileOf(id)).inputs)) {
        assert.doesNotMatch(file, /node_modules\/@aws-crypto\/client-node\//, `${id} bundles ${file}`);
        for (const imported of input.imports) {
          if (imported.kind !== 'require-call') continue;
          assert.doesNotMatch(
            imported.path,
            /node_modules\/(@aws-sdk|@smithy|@aws-crypto)\/.*\/(dist-es|module)\//,
            `${id}: ${file} requires ${imported.path}`,
          );
        }
      }
    }
  });

  it('what loads at start: no composer or signer in the sender, and with its first message no tldts, joi or node:http; no S3 client in add, delete or the sender', async () => {
    // The composer and signer load with the first message (shared/delivery/load-composer.ts),
    // mailauth's signer has its own helpers module (patches/mailauth+7.1.0.patch), and message
    // objects load S3 on first use (shared/platform/objects/objects.ts): pinned here, as the
    // benchmark's "loaded at start" counts them (index.mjs and the chunks it imports statically).
    // `alsoLoading`: the lazily imported module whose chunk is loaded too (what a first message loads).
    const atStartOf = async (id: string, alsoLoading?: string) => {
      const outDir = mkdtempSync(join(tmpdir(), `start-${id}-`));
      try {
        const { metafile } = await build({
          ...esbuildOptionsFor(entryOf(id), outDir),
          write: false,
          metafile: true,
        });
        const entry = Object.keys(metafile.outputs).find((name) => name.endsWith('/index.mjs')) as string;
        const roots = [entry];
        if (alsoLoading !== undefined) {
          const chunk = Object.keys(metafile.outputs).find((name) =>
            metafile.outputs[name]?.entryPoint?.endsWith(alsoLoading),
          );
          assert.ok(chunk !== undefined, `${id}: ${alsoLoading} is not a lazy chunk`);
          roots.push(chunk);
        }
        const start = new Set(roots);
        const queue = [...roots];
        while (queue.length > 0) {
          for (const imported of metafile.outputs[queue.pop() as string]?.imports ?? []) {
            if (imported.kind !== 'import-statement' || imported.external || start.has(imported.path))
              continue;
            start.add(imported.path);
            queue.push(imported.path);
          }
        }
        const inputs = (names: Iterable<string>) =>
          [...names].flatMap((name) => Object.keys(metafile.outputs[name]?.inputs ?? {}));
        const lazy = Object.keys(metafile.outputs).filter((name) => !start.has(name));
        // Built-ins imported with an import statement by a module that loads at start.
        const startInputs = new Set(inputs(start));
        const builtinImports = Object.entries(metafile.inputs).flatMap(([file, input]) =>
          startInputs.has(file)
            ? input.imports
                .filter((imported) => imported.external && imported.kind === 'import-statement')
                .map((imported) => ({ file, builtin: imported.path }))
            : [],
        );
        return { atStart: inputs(start), lazy: inputs(lazy), builtinImports };
      } finally {
        rmSync(outDir, { recursive: true, force: true });
      }
    };
    const sender = await atStartOf('sender');
    for (const lazy of ['node_modules/nodemailer/', 'node_modules/mailauth/']) {
      assert.ok(!sender.atStart.some((input) => input.includes(lazy)), `sender loads ${lazy} at start`);
    }
    const firstMessage = await atStartOf('sender', 'shared/delivery/compose-message.ts');
    assert.ok(
      firstMessage.atStart.some((input) => input.includes('node_modules/mailauth/lib/tools-core.js')),
    );
    for (const banned of ['node_modules/tldts/', 'node_modules/joi/', 'node_modules/mailauth/lib/tools.js']) {
      assert.ok(
        !firstMessage.atStart.some((input) => input.includes(banned)),
        `sender loads ${banned} with its first message`,
      );
    }
    // patches/nodemailer+10.6.0.patch: nodemailer's URL fetcher requires node:http and node:https
    // on its first request. An ESM import of `node:http` builds its namespace, which loads undici,
    // http2 and worker_threads (about 20 ms), for `href` content the sender never uses. (The other
    // built-ins nodemailer imports at load, dns, net, os, util and zlib, cost about 3 ms together
    // and stay: measured below the 10 % a patch has to pay, bench/notes.md.)
    const importers = firstMessage.builtinImports.filter((imported) => imported.builtin === 'node:http');
    assert.deepEqual(importers, [], 'sender imports node:http with its first message');
    for (const id of ['sender', 'message-add', 'message-delete']) {
      const { atStart, lazy } = id === 'sender' ? sender : await atStartOf(id);
      assert.ok(
        !atStart.some((input) => input.includes('node_modules/@aws-sdk/client-s3/')),
        `${id}: S3 at start`,
      );
      assert.ok(
        lazy.some((input) => input.includes('node_modules/@aws-sdk/client-s3/')),
        `${id}: no S3 chunk`,
      );
    }
  });

  it('the bundled signer (mailauth with the libmime alias) signs what mailauth verifies', async () => {
    // The alias swaps libmime's foldLines for nodemailer's inside the bundle only; this runs the
    // bundle's own signer on a message whose DKIM-Signature must be folded, and verifies it with
    // mailauth as installed (real libmime).
    const outDir = mkdtempSync(join(tmpdir(), 'signer-'));
    try {
      await build({
        ...esbuildOptionsFor(join(process.cwd(), 'shared/delivery/mail/dkim-signer.ts'), outDir),
      });
      const { signMessage } = (await import(pathToFileURL(join(outDir, 'index.mjs')).href)) as {
        signMessage: (raw: Buffer, key: unknown) => Promise<Buffer>;
      };
      const { key, txt } = testSigningKey('rsa-sha256', 'bundle');
      const raw = Buffer.from(
        [
          'From: Orders <orders@shop.test>',
          'To: someone@example.net',
          `Subject: ${'A subject long enough to be folded in the signature header '.repeat(3)}`,
          'Date: Mon, 23 Nov 2026 12:00:00 +0000',
          'Message-ID: <bundle-signer@shop.test>',
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          '',
          'Signed by the bundled signer.',
          '',
        ].join('\r\n'),
      );
      const signed = await signMessage(raw, key);
      const header = signed.toString().split('\r\nFrom:')[0] as string;
      assert.match(header, /\r\n[ \t]/, 'the DKIM-Signature header is not folded');
      const verdicts = await verifyDkimOffline(signed, { 'bundle._domainkey.shop.test': txt });
      assert.deepEqual(
        verdicts.map((entry) => entry.status.result),
        ['pass'],
      );
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  });

  it("nodemailer's URL fetcher, bundled, requires node:http on its first request and fetches", async () => {
    // patches/nodemailer+10.6.0.patch takes node:http and node:https out of the fetcher's imports;
    // `href` content (a redirect, gzip) must still arrive through the bundle.
    const outDir = mkdtempSync(join(tmpdir(), 'fetch-'));
    const server = createServer((request, response) => {
      if (request.url === '/moved') {
        response.writeHead(302, { location: '/body' }).end();
        return;
      }
      response.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('fetched over http'));
    });
    try {
      const entry = join(outDir, 'entry.mjs');
      writeFileSync(entry, "export { default as nmfetch } from 'nodemailer/lib/fetch';\n");
      await build({ ...esbuildOptionsFor(entry, outDir), nodePaths: [join(process.cwd(), 'node_modules')] });
      const { nmfetch } = (await import(pathToFileURL(join(outDir, 'index.mjs')).href)) as {
        nmfetch: (url: string) => NodeJS.ReadableStream;
      };
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const chunks: Buffer[] = [];
      for await (const chunk of nmfetch(`http://127.0.0.1:${port}/moved`)) chunks.push(chunk as Buffer);
      assert.equal(Buffer.concat(chunks).toString(), 'fetched over http');
    } finally {
      server.close();
      rmSync(outDir, { recursive: true, force: true });
    }
  });

  it('the bundled health function runs as Lambda would load it', async () => {
    const module = (await import(pathToFileURL(join(bundleDir('health'), 'index.mjs')).href)) as {
      handler: (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>;
    };
    const response = await module.handler(
      {
        resource: '/health',
        path: '/health',
        httpMethod: 'GET',
        headers: {},
        multiValueHeaders: {},
        queryStringParameters: null,
        body: null,
        isBase64Encoded: false,
        requestContext: { requestId: 'bundle-test', identity: { sourceIp: '198.51.100.7' } },
      },
      { awsRequestId: 'bundle-test', functionName: 'health', getRemainingTimeInMillis: () => 10_000 },
    );
    assert.equal(response.statusCode, 200);
    assert.deepEqual(JSON.parse(response.body), { data: { status: 'ok', caller_ip: '198.51.100.7' } });
  });
});
