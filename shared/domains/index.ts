export { type DomainRecord, getDomain, normaliseDomain, toDomain } from './store/domains.ts';
