import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { benchHost } from './host.ts';
import { call, storedItem, statusesOf } from './service.ts';
import { profiles } from './scale-cost.ts';
import { registerDomain } from '../shared/services/domain-registry.ts';
const host = await benchHost();
const account = `bench-${randomUUID().slice(0, 8)}`;
await registerDomain(`${account}.test`, account);
const who = { url: host.url, tokens: [await host.mint(account)] };
const p = profiles[0]!;
const r = await call(who, 'POST', '/message/add-1.0', { message_sender: `noreply@${account}.test`, to: p.recipients, subject: 'Your order 12345', content: { kind: 'mixed', text: p.text, html: p.html } });
const uuid = r.body.data.message_uuid;
console.log("QUEUED" + JSON.stringify(await storedItem(uuid)));
for (;;) { const s = await statusesOf([uuid]); if (s.get(uuid) === 'delivered') break; await new Promise(r => setTimeout(r, 100)); }
const item = await storedItem(uuid);
console.log("JSON" + JSON.stringify(item));
await host.stop();
process.exit(0);
