/**
 * Says how a domain becomes one of the caller's: an operator registers it for the account (there is
 * no self-service route, as the domain's DNS must be proven first).
 */
export function notYourDomainMessage(domain: string, account: string): string {
  return `${domain} is not one of your sending domains (account ${account}): an operator adds it with \`npm run admin -- domains add ${domain} --account ${account}\` (locally: SEED_DOMAINS=${domain}=${account} npm start), then publishes its DKIM records (docs/dkim.md)`;
}
