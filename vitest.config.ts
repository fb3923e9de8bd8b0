import { defineConfig } from 'vitest/config';

/**
 * Five projects, one folder each: unit (pure logic), integration (the local host over HTTP and the
 * real emulators), infra (CDK template assertions), reliability (sized by environment variables;
 * small under `npm test`, full size under `npm run test:reliability`) and e2e (the web console in
 * Chromium). Only the projects that talk to a host name the global setup (test/setup/local-host.ts),
 * which starts one local host with its emulators for the whole run, however many of them run; unit
 * and infra start nothing and open no port, so `vitest run --project unit` takes seconds.
 * Files run in two forked workers, as on a 2-core machine.
 */
const localHost = ['test/setup/local-host.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    // What tests need on a loaded 2-core machine, with room: the slowest integration, infra and e2e
    // tests take 30–40 s there (a scheduled send past the 30 s account cache, bundling every
    // function, a console session running out), and hooks start secondary hosts with their own
    // emulators. unit and reliability set their own below.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    teardownTimeout: 60_000,
    reporters: ['default'],
    projects: [
      // Pure logic, in milliseconds; the room is for RSA key generation on a busy machine.
      {
        extends: true,
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], testTimeout: 20_000, hookTimeout: 20_000 },
      },
      {
        extends: true,
        test: { name: 'integration', include: ['test/integration/**/*.test.ts'], globalSetup: localHost },
      },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'] } },
      {
        extends: true,
        // Sized by environment variables: at full size (`npm run test:reliability`) a test runs for minutes.
        test: {
          name: 'reliability',
          include: ['test/reliability/**/*.test.ts'],
          globalSetup: localHost,
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      // The web console in Debian's Chromium (playwright-core), against the same local host.
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], globalSetup: localHost } },
    ],
    coverage: {
      provider: 'v8',
      // The console's components run in Chromium (test/e2e), where Node's V8 coverage cannot see them.
      exclude: ['test/**', 'bench/**', 'clients/**', 'vitest.config.ts', 'console/src/**/*.tsx'],
      reporter: ['text-summary'],
      // 82.9 % of lines when the suite moved to vitest, minus two points (docs/decisions/0015-tests.md).
      thresholds: { lines: 81 },
    },
  },
});
