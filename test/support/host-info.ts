import type { JWK } from 'jose';

/** What vitest's global setup tells each test file about the local host it started. */
export interface HostInfo {
  url: string;
  dataDir: string;
  env: Record<string, string>;
  issuer: string;
  audience: string;
  jwksUrl: string;
  privateJwk: JWK;
  /** File that receives the service's structured log lines. */
  logFile: string;
  /** The run's DNS server (DNS_SERVERS of the service) and the folder of its records. */
  dns: { server: string; zoneDir: string };
  /** The fake Gravatar's control endpoint (test/support/fake-gravatar.ts). */
  gravatarControlUrl: string;
  /** The SMTP submission server: STARTTLS port, implicit-TLS port and its certificate (PEM). */
  submission: { port: number; securePort: number; certificate: string };
}
