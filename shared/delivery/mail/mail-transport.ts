import { configuredTransport, type MailTransport } from './transport.ts';

/**
 * The relay MAIL_TRANSPORT names, created once per instance. Each adapter is imported only when
 * chosen, so the sender bundle carries one of them at run time.
 */
let chosen: Promise<MailTransport> | undefined;

export function mailTransport(): Promise<MailTransport> {
  chosen ??= (async () => {
    if (configuredTransport() === 'ses') return (await import('./ses-transport.ts')).createSesTransport();
    return (await import('./smtp-transport.ts')).createSmtpTransport();
  })();
  chosen.catch(() => {
    chosen = undefined;
  });
  return chosen;
}
