import { BlockList, isIP } from 'node:net';
import type { MiddlewareObj } from '@middy/core';
import { httpConfig } from '../config/http.ts';
import { Code } from '../errors/catalogue.ts';
import { ServiceError } from '../errors/service-error.ts';
import type { ApiContext, ApiEvent, ApiResult } from '../http/api-types.ts';

/** Parses `BLOCKED_CIDRS` once; a malformed entry fails the function at start. */
export function buildBlockList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of cidrs) {
    const [address = '', prefixText] = entry.split('/');
    const family = isIP(address);
    if (family === 0) throw new Error(`BLOCKED_CIDRS entry "${entry}" is not an IP network`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    const prefix = prefixText === undefined ? (family === 4 ? 32 : 128) : Number(prefixText);
    if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
      throw new Error(`BLOCKED_CIDRS entry "${entry}" has an invalid prefix`);
    }
    list.addSubnet(address, prefix, type);
  }
  return list;
}

const blocked = buildBlockList(httpConfig.blockedCidrs);

export function isBlocked(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Answers 103 for callers inside a blocked network. The address is the gateway's view of the TCP
 * peer (requestContext.identity.sourceIp), never a client-supplied forwarded header.
 */
export function networkRule(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'networkRule',
    before: ({ context }) => {
      if (httpConfig.blockedCidrs.length > 0 && isBlocked(blocked, context.sourceIp)) {
        throw new ServiceError(Code.IpBlocked);
      }
    },
  };
}
