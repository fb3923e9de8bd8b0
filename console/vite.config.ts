import { defineConfig } from 'vite';

/**
 * The console's build: Vite (Rolldown) with Preact's JSX, relative asset paths (`base: './'`) so
 * the same files work at `/console/` on the local gateway and at `/` on CloudFront, and nothing
 * inlined into index.html (its Content-Security-Policy allows scripts from its own origin only).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    // Chromium, Firefox and Safari support <link rel=modulepreload>: no polyfill (it would be inline).
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
