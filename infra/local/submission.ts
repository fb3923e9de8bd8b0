import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { localCertificate } from '../../submission/certificate.ts';
import { submissionSettings } from '../../submission/config.ts';
import { createSubmissionServer } from '../../submission/server.ts';

/**
 * The SMTP submission server of the local host, in front of the local gateway, with a self-signed
 * certificate kept in `<DATA_DIR>/submission-tls.json` (docs/smtp.md, "Locally").
 */
export interface LocalSubmission {
  port: number;
  securePort: number;
  /** The certificate in PEM, for clients that pin it. */
  certificate: string;
  stop(): Promise<void>;
}

export async function startLocalSubmission(options: {
  apiUrl: string;
  dataDir: string;
  host: string;
  port: number;
  securePort: number;
}): Promise<LocalSubmission> {
  const tls = localCertificate(join(options.dataDir, 'submission-tls.json'));
  const logFile = process.env.LOG_FILE;
  const server = createSubmissionServer({
    ...submissionSettings(),
    apiUrl: options.apiUrl,
    tls,
    // The local host prints no per-request lines; the submission server's go where the handlers' do.
    log: logFile === undefined ? () => undefined : (line) => appendLine(logFile, line),
  });
  try {
    const ports = await server.listen(options.port, options.securePort, options.host);
    return { ...ports, certificate: tls.cert, stop: () => server.close() };
  } catch (error) {
    await server.close().catch(() => undefined);
    throw error;
  }
}

function appendLine(file: string, line: string): void {
  try {
    appendFileSync(file, `${line}\n`);
  } catch {
    // A log file that cannot be written loses the line, never the message.
  }
}
