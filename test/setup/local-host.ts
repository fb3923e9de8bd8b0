import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureConsoleBuilt } from '../../console/build.ts';
import { startLocalHost } from '../../infra/local/host.ts';
import { startTestDnsServer } from '../support/dns-server.ts';
import { startFakeGravatar } from '../support/fake-gravatar.ts';
import type { HostInfo } from '../support/host-info.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    host: HostInfo;
  }
}

/**
 * vitest's global setup of the projects that talk to a local host (integration, reliability, e2e;
 * vitest.config.ts): one local host (emulators, identity provider, gateway, workers) per run, on
 * free ports and with in-memory state in a temporary DATA_DIR, handed to every test file through
 * `provide('host', …)` (read with `hostInfo()` from test/support/host.ts). unit and infra name no
 * global setup, so running only them starts nothing.
 *
 * vitest runs a project's global setup once per project, each in its own module instance; the
 * projects of one run share the host through `globalThis` of the main process, and the last
 * project's teardown stops it.
 */
interface SharedHost {
  started: Promise<{ info: HostInfo; stop: () => Promise<void> }>;
  users: number;
}

const sharedKey = Symbol.for('svc-mail.test.local-host');
const registry = globalThis as typeof globalThis & { [sharedKey]?: SharedHost };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let shared = registry[sharedKey];
  if (shared === undefined) {
    shared = { started: startHost(), users: 0 };
    registry[sharedKey] = shared;
  }
  shared.users += 1;
  const { info, stop } = await shared.started;
  project.provide('host', info);
  return async () => {
    const current = registry[sharedKey];
    if (current === undefined) return;
    current.users -= 1;
    if (current.users > 0) return;
    delete registry[sharedKey];
    await stop();
  };
}

async function startHost(): Promise<{ info: HostInfo; stop: () => Promise<void> }> {
  // The end-to-end tests drive the built console; npm ci built it, this catches sources changed since.
  await ensureConsoleBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-mail-test-'));
  // The service's log lines go to a file that tests can read (e.g. to prove no key material is logged).
  process.env.LOG_FILE = join(dataDir, 'service.log');
  // A real DNS server on loopback answers the service's DKIM lookups; tests publish records as files.
  const dns = await startTestDnsServer(join(dataDir, 'dns-zone'));
  process.env.DNS_SERVERS = dns.address;
  // A local stand-in for Gravatar; the handlers read GRAVATAR_BASE_URL at start, so it comes first.
  // 3 s rather than the default 1.5 s, so a loaded machine does not turn a fast answer into a timeout.
  const gravatar = await startFakeGravatar();
  process.env.GRAVATAR_BASE_URL = gravatar.baseUrl;
  process.env.GRAVATAR_TIMEOUT_MS = '3000';
  // Webhook retries after 1 s, 1 s, 1 s (4 attempts), so retry and dead-letter tests take seconds.
  process.env.WEBHOOK_RETRY_SCHEDULE ??= '1,1,1';
  // A failing endpoint pauses for 2 s, then 4 s (instead of 1 min, 5 min, …), so pause tests take seconds.
  process.env.WEBHOOK_PAUSE_SCHEDULE ??= '2,4';
  // The DKIM key pool is filled by the tests that need it (refillKeyPool), not by the schedule, so
  // whether an add finds a pooled key is theirs to decide.
  process.env.DKIM_INTERVAL_SECONDS ??= '3600';
  const host = await startLocalHost({
    port: 0,
    idpPort: 0,
    dataDir,
    seedDomains: 'example.test=dev-account',
  });
  const info: HostInfo = {
    url: host.url,
    dataDir,
    env: host.env,
    issuer: host.idp.issuer,
    audience: host.idp.audience,
    jwksUrl: host.idp.jwksUrl,
    privateJwk: host.idp.privateJwk,
    logFile: process.env.LOG_FILE,
    dns: { server: dns.address, zoneDir: dns.zoneDir },
    gravatarControlUrl: gravatar.controlUrl,
    submission: {
      port: host.submission.port,
      securePort: host.submission.securePort,
      certificate: host.submission.certificate,
    },
  };
  const stop = async () => {
    await host.stop();
    await dns.stop();
    await gravatar.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { info, stop };
}
