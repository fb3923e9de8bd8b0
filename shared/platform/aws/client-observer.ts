/**
 * The one seam through which a test host may watch this process's AWS calls: the local host, when
 * asked to record them (infra/local/aws-call-recorder.ts), puts a function on `globalThis` under
 * this symbol, and every client factory hands its new client to it. The recorder itself lives in
 * the host, outside every bundle; on Lambda nothing sets the symbol and this is one property read.
 * `globalThis`, not a module variable, because each bundle carries its own copy of this module.
 */
export const clientObserverKey = Symbol.for('svc-mail.aws-client-observer');

/** What the host installs: called once with each new SDK client. */
export type ClientObserver = (client: { middlewareStack: unknown }) => void;

export function observeClient<T extends { middlewareStack: unknown }>(client: T): T {
  const observer = (globalThis as { [clientObserverKey]?: ClientObserver })[clientObserverKey];
  observer?.(client);
  return client;
}
