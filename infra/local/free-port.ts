import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on loopback. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** An error `npm start` prints as it is (no stack trace): it already says what to do. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** True when nothing listens on host:port yet (port 0 is always free: the OS picks one). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  if (port === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * Checks every fixed port before anything starts, so a port in use fails at once and names the
 * variable that moves it (`PORT=3100 npm start`), instead of failing halfway with children running.
 */
export async function requireFreePorts(
  ports: readonly { variable: string; port: number; host?: string }[],
): Promise<void> {
  const busy: string[] = [];
  for (const { variable, port, host } of ports) {
    if (!(await portIsFree(port, host)))
      busy.push(
        `port ${port} is in use: set ${variable} to another port (e.g. ${variable}=${port + 100} npm start), or stop what uses it`,
      );
  }
  if (busy.length > 0) throw new StartupError(`Cannot start:\n  - ${busy.join('\n  - ')}`);
}
