import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of an emulator that a test can stop and start again on the same port:
 * while stopped, the port refuses connections and every open connection is cut, exactly what a
 * client sees when the service behind it goes away; the emulator itself keeps its data, as a real
 * AWS store does through an outage. Start it before the host (its port goes into the host's
 * AWS_ENDPOINT_URL_*), then name the target once the host has reported its emulators.
 */
export interface OutageProxy {
  readonly endpoint: string;
  setTarget(endpoint: string): void;
  /** Closes the port and cuts every connection; resolves once the port refuses connections. */
  stop(): Promise<void>;
  /** Listens on the same port again and forwards. */
  start(): Promise<void>;
  /** Keeps accepting connections but never answers (a hung store); `start()` ends it. */
  hang(): void;
  close(): Promise<void>;
}

export async function startOutageProxy(): Promise<OutageProxy> {
  let target: { host: string; port: number } | undefined;
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let hanging = false;

  const open = async () => {
    const listening = createServer((incoming) => {
      if (hanging) {
        sockets.add(incoming);
        incoming.on('error', () => sockets.delete(incoming)).on('close', () => sockets.delete(incoming));
        incoming.resume();
        return;
      }
      if (target === undefined) {
        incoming.destroy();
        return;
      }
      const outgoing = connect(target.port, target.host);
      sockets.add(incoming);
      sockets.add(outgoing);
      const drop = () => {
        incoming.destroy();
        outgoing.destroy();
        sockets.delete(incoming);
        sockets.delete(outgoing);
      };
      incoming.on('error', drop).on('close', drop);
      outgoing.on('error', drop).on('close', drop);
      incoming.pipe(outgoing).pipe(incoming);
    });
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => resolve());
    });
    const address = listening.address();
    port = typeof address === 'object' && address !== null ? address.port : port;
    server = listening;
  };
  await open();

  const shut = async () => {
    const closing = server;
    server = undefined;
    if (closing === undefined) return;
    const closed = new Promise<void>((resolve) => closing.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await closed;
  };

  return {
    endpoint: `http://127.0.0.1:${port}`,
    setTarget(endpoint) {
      const url = new URL(endpoint);
      target = { host: url.hostname, port: Number(url.port) };
    },
    stop: shut,
    start: async () => {
      if (hanging) {
        hanging = false;
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      }
      if (server === undefined) await open();
    },
    hang() {
      hanging = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: shut,
  };
}
