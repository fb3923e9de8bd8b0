import { href } from './router.ts';

/**
 * What an account without mail must know first: it sends only from a domain registered to it. The
 * API has no list of an account's domains, so the hint is given on every empty page, with the
 * command that registers one and where to check it.
 */
export function SendingDomainHint() {
  return (
    <p class="hint">
      <strong>No sending domain yet?</strong> An account sends only from domains registered to it. The
      operator registers one with{' '}
      <code>npm run admin -- domains add example.com --account &lt;account id&gt;</code>; then publish its
      DKIM record, shown on the <a href={href('domains')}>Domains</a> page.
    </p>
  );
}
