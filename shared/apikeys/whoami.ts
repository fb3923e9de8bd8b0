import type { Caller } from '../platform/http/api-types.ts';
import { sendableDomainsOf } from './account-domains.ts';

export interface Whoami {
  account: string;
  scopes: string[];
  credential: 'jwt' | 'api_key';
  key_id?: string;
  domains: string[];
}

/** What the presented credential is and may do: for clients, CLIs and the SMTP submission server. */
export async function whoami(caller: Caller): Promise<Whoami> {
  return {
    account: caller.account,
    scopes: [...caller.scopes].sort(),
    credential: caller.credential,
    ...(caller.keyId === undefined ? {} : { key_id: caller.keyId }),
    domains: await sendableDomainsOf(caller),
  };
}
