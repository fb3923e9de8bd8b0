import { createSvcMailClient } from './svc-mail.ts';

/**
 * The README's typed-client example, runnable with the project's Node:
 *   TOKEN=… npm run -s example:client          (BASE_URL defaults to the local host)
 */
const token = process.env.TOKEN;
if (token === undefined || token === '') {
  process.stderr.write('Set TOKEN (npm start prints one) and, for another host, BASE_URL.\n');
  process.exit(2);
}
const api = createSvcMailClient({ baseUrl: process.env.BASE_URL ?? 'http://127.0.0.1:3000', token });
const { data, error } = await api.POST('/message/add-1.0', {
  params: { header: { 'Idempotency-Key': `example-${Date.now()}` } },
  body: {
    message_sender: 'Shop <noreply@example.test>',
    to: ['ada@example.org'],
    subject: 'Your order has shipped',
    content: { kind: 'text_only', text: 'On its way.' },
  },
});
if (error) console.error(error.error.code, error.error.message);
else console.log(data.data.message_uuid, data.data.status);
