import type { ConsoleConfig } from './config-contract.ts';

/** Reads `config.json` beside the page: where the API and the identity provider are. */
export async function loadConfig(): Promise<ConsoleConfig> {
  const response = await fetch(new URL('config.json', document.baseURI), { cache: 'no-cache' });
  if (!response.ok) throw new Error(`The console's config.json could not be read (HTTP ${response.status})`);
  const config = (await response.json()) as Partial<ConsoleConfig>;
  for (const field of ['api_url', 'issuer', 'client_id'] as const) {
    if (typeof config[field] !== 'string' || config[field] === '')
      throw new Error(`The console's config.json lacks "${field}"`);
  }
  for (const field of ['resource', 'account_claim'] as const) {
    if (config[field] !== undefined && (typeof config[field] !== 'string' || config[field] === ''))
      throw new Error(`The console's config.json has an invalid "${field}"`);
  }
  return config as ConsoleConfig;
}
