import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import dns2 from 'dns2';
import { freePort } from '../../infra/local/free-port.ts';

/**
 * The DNS server of the test run: a real authoritative-style server (dns2) on loopback, UDP and TCP
 * on the same port (long TXT answers are truncated over UDP and retried over TCP, as on the
 * Internet). The test run's global setup (test/setup/local-host.ts) starts it and points the service at it with DNS_SERVERS.
 *
 * Its records are files, one per owner name, in `zoneDir` (see test/support/dns.ts):
 * `<name>.json` holding `{"txt": [["string", …], …], "mx": [{"priority", "exchange"}]}` answers those TXT and MX records,
 * `{"behaviour": "silent"}` never answers (a dead server, for that name only),
 * `{"behaviour": "servfail"}` answers SERVFAIL. Any other name is NXDOMAIN. Files are read on every
 * query, so a test publishes or removes a record by writing or deleting its file, and test files
 * running in parallel never share a name.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, the DNS_SERVERS value. */
  address: string;
  zoneDir: string;
  stop(): Promise<void>;
}

export interface ZoneEntry {
  txt?: string[][];
  mx?: Array<{ priority: number; exchange: string }>;
  behaviour?: 'silent' | 'servfail';
}

/** RFC 1035 response codes (dns2's typings do not declare Packet.RCODE). */
const rcode = { servfail: 2, nxdomain: 3 } as const;
const namePattern = /^[a-z0-9._-]{1,253}$/;

export function zoneFile(zoneDir: string, name: string): string {
  const normalised = name.toLowerCase().replace(/\.$/, '');
  if (!namePattern.test(normalised) || normalised.includes('..')) throw new Error(`Bad DNS name ${name}`);
  return join(zoneDir, `${normalised}.json`);
}

function readEntry(zoneDir: string, name: string): ZoneEntry | undefined {
  try {
    return JSON.parse(readFileSync(zoneFile(zoneDir, name), 'utf8')) as ZoneEntry;
  } catch {
    return undefined;
  }
}

export async function startTestDnsServer(zoneDir: string): Promise<TestDnsServer> {
  mkdirSync(zoneDir, { recursive: true });
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      response.header.aa = 1;
      const [question] = request.questions;
      const entry = question === undefined ? undefined : readEntry(zoneDir, question.name);
      if (entry?.behaviour === 'silent') return;
      if (question === undefined || entry === undefined) {
        response.header.rcode = rcode.nxdomain;
      } else if (entry.behaviour === 'servfail') {
        response.header.rcode = rcode.servfail;
      } else if (question.type === Packet.TYPE.MX) {
        for (const record of entry.mx ?? []) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.MX,
            class: Packet.CLASS.IN,
            ttl: 60,
            priority: record.priority,
            exchange: record.exchange,
          } as never);
        }
      } else if (question.type === Packet.TYPE.TXT) {
        for (const strings of entry.txt ?? []) {
          response.answers.push({
            name: question.name,
            type: Packet.TYPE.TXT,
            class: Packet.CLASS.IN,
            ttl: 60,
            data: strings,
          } as never);
        }
      }
      send(response);
    },
  });
  server.on('requestError', () => undefined);
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server
      .listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } })
      .then(() => resolve(), reject);
  });
  return {
    address: `127.0.0.1:${port}`,
    zoneDir,
    stop: async () => {
      await server.close();
    },
  };
}
