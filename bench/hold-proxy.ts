import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through HTTP proxy in front of the API that, once armed with `holdAdds(n)`, plays a slow
 * API for `POST /message/add-1.0`: it keeps each add until `n` have arrived, so that many messages
 * are in flight at the submission server at once, and on `release()` accepts them itself (the API's
 * own handling of large adds is measured by the large-add section; here only the submission
 * server's memory counts). Each held add's eml is decoded, so a truncated message is noticed.
 */
export interface HoldProxy {
  url: string;
  /**
   * Resolves with the number held when `count` adds are held, or `maxWaitMs` after the first was
   * (a client's own deadline must not end the wait on a loaded machine).
   */
  holdAdds(count: number, maxWaitMs: number): Promise<number>;
  release(): void;
  /** The decoded sizes of the messages accepted while holding. */
  acceptedBytes(): number[];
  close(): Promise<void>;
}

export async function holdProxy(target: string): Promise<HoldProxy> {
  let holding = 0;
  let released = false;
  let held: Array<() => void> = [];
  let allHeld: ((count: number) => void) | undefined;
  let maxWait = 0;
  let timer: NodeJS.Timeout | undefined;
  const accepted: number[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (holding > 0 && request.url === '/message/add-1.0') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { content: { eml: string } };
      // After the release, adds are accepted at once.
      if (!released)
        await new Promise<void>((resume) => {
          held.push(resume);
          if (held.length === 1) timer = setTimeout(() => allHeld?.(held.length), maxWait);
          if (held.length === holding) allHeld?.(held.length);
        });
      accepted.push(Buffer.from(body.content.eml, 'base64').length);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: { message_uuid: randomUUID() } }));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).filter(
        ([name]) => !['host', 'content-length', 'connection'].includes(name),
      ),
    ) as Record<string, string>;
    try {
      const answer = await fetch(new URL(request.url ?? '/', target), {
        method: request.method,
        headers,
        ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
      });
      response.writeHead(answer.status, {
        'content-type': answer.headers.get('content-type') ?? 'application/json',
      });
      response.end(Buffer.from(await answer.arrayBuffer()));
    } catch (error) {
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 2, message: String(error) } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdAdds(count, maxWaitMs) {
      holding = count;
      released = false;
      maxWait = maxWaitMs;
      return new Promise<number>((resolve) => {
        allHeld = (heldNow) => {
          clearTimeout(timer);
          allHeld = undefined;
          resolve(heldNow);
        };
      });
    },
    release() {
      clearTimeout(timer);
      released = true;
      for (const resume of held) resume();
      held = [];
    },
    acceptedBytes: () => [...accepted],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
