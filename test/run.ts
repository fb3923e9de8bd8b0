import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalHost } from '../infra/local/host.ts';
import { startTestDnsServer } from './support/dns-server.ts';
import { startFakeGravatar } from './support/fake-gravatar.ts';
import { type HostInfo, hostInfoVariable } from './support/host-info.ts';

/**
 * `npm test`: starts one local host (emulators, identity provider, gateway, workers) on free
 * ports, runs every test file with node's test runner against it, and stops it.
 * `npm test -- test/unit` (or any files/globs) narrows the run.
 */
const patterns = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['test']).map((pattern) =>
  existsSync(pattern) && statSync(pattern).isDirectory()
    ? `${pattern.replace(/\/$/, '')}/**/*.test.ts`
    : pattern,
);
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
const host = await startLocalHost({ port: 0, idpPort: 0, dataDir, seedDomains: 'example.test=dev-account' });
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
};

const child = spawn(
  process.execPath,
  [
    '--disable-warning=ExperimentalWarning',
    '--test',
    '--test-reporter=spec',
    '--test-concurrency=2',
    '--test-timeout=300000',
    ...patterns,
  ],
  { stdio: 'inherit', env: { ...process.env, [hostInfoVariable]: JSON.stringify(info) } },
);
const code: number = await new Promise((resolve) => child.on('exit', (exitCode) => resolve(exitCode ?? 1)));
await host.stop();
await dns.stop();
await gravatar.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(code);
