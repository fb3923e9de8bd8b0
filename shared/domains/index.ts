export { notReadyMessage } from './sending-ready.ts';
export { type DomainRecord, getDomain, normaliseDomain, toDomain } from './store/domains.ts';
