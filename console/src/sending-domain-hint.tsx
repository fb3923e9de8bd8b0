import { api, dataOf } from './api.ts';
import { href } from './router.ts';
import { useAsync } from './use-async.ts';

/**
 * What an account without mail must know first: it sends only from a domain of its own. Shown only
 * while the account has no domain (the domain list route).
 */
export function SendingDomainHint() {
  const [domains] = useAsync(async () => {
    const page = await dataOf(api().POST('/domain/query-1.0', { body: { limit: 1 } }));
    return 'domains' in page ? page.domains.length : 1;
  }, []);
  if (domains.state !== 'ready' || domains.value > 0) return null;
  return (
    <p class="hint">
      <strong>No sending domain yet?</strong> An account sends only from its own domains. Add one on the{' '}
      <a href={href('domains')}>Domains</a> page and publish the records it lists; an operator can also
      register one with <code>npm run admin -- domains add example.com --account &lt;account id&gt;</code>.
    </p>
  );
}
