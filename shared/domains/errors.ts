import { Code } from '../platform/errors/catalogue.ts';
import { ServiceError } from '../platform/errors/service-error.ts';

/** Another account's domain answers exactly like an unknown one: nobody learns who holds what. */
export const domainNotFound = () =>
  new ServiceError(Code.NotFound, 'Domain not found', {
    details: [{ field: 'domain', message: 'No such domain on the platform for your account' }],
  });
