export { notReadyMessage } from './sending-ready.ts';
export {
  type DomainRecord,
  getDomain,
  listDomainsOfAccount,
  normaliseDomain,
  toDomain,
} from './store/domains.ts';
