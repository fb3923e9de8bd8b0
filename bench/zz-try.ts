import '/work/wt-domains/bench/environment.ts';
import { registerDomain } from '/work/wt-domains/shared/domains/registry.ts';
import { benchHost } from '/work/wt-domains/bench/host.ts';
import { domainsSection } from '/work/wt-domains/bench/domains.ts';
const host = await benchHost();
try {
  const account = `bench-try-${Date.now()}`;
  await registerDomain(`${account}.test`, account);
  const who = { url: host.url, tokens: [await host.mint(account)] };
  const result = await domainsSection(who as never, `noreply@${account}.test`, true);
  console.log([...result.lines, ...result.costLines].join('\n'));
} finally {
  await host.stop();
}
process.exit(0);
