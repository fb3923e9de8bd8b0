export {
  type DomainRecord,
  getDomain,
  listDomainsOfAccount,
  normaliseDomain,
  toDomain,
} from './store/domains.ts';
