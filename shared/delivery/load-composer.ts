/**
 * Starts loading the composer and signer (./compose-message.ts: nodemailer's composer and
 * mailauth's signer, the largest part of the sender and of the content route). Both need it for
 * every message, but only after several reads (the message, its claim, the account, suppressions,
 * the bodies, the keys): a caller starts the load first and awaits it when it composes, so an
 * instance's first message loads it while those reads wait on the network, instead of every cold
 * start loading it before the first event.
 */
export function loadComposer(): Promise<typeof import('./compose-message.ts')> {
  const loading = import('./compose-message.ts');
  // Awaited only when composing: a message that ends before then must not leave it unhandled.
  loading.catch(() => undefined);
  return loading;
}
