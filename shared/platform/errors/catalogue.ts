/**
 * The numeric error-code catalogue of the interface (spec section 7). Every error response the
 * service produces takes its HTTP status and default message from here.
 */
export const catalogue = {
  1: { status: 503, message: 'No request for action execution' },
  2: { status: 500, message: 'Internal and unknown server error' },
  3: { status: 503, message: 'Requested database not configured' },
  4: { status: 503, message: 'Failed to set up DB connection/transaction' },
  5: { status: 503, message: 'Failed to finalise DB transaction/connection' },
  6: { status: 501, message: 'Invalid parameter type in action contract' },
  7: { status: 503, message: 'Internal action validation error' },
  8: { status: 501, message: 'Action not present in endpoint mapping' },
  9: { status: 501, message: 'Validator execution error' },
  100: { status: 404, message: 'Endpoint not configured' },
  101: { status: 202, message: 'OPTIONS/CORS handling' },
  102: { status: 405, message: 'HTTP method not supported for the action' },
  103: { status: 401, message: 'IP address blocked by network rule' },
  104: { status: 401, message: 'Authorization header missing' },
  105: { status: 401, message: 'Session/token invalid or expired' },
  106: { status: 400, message: 'Input is not valid JSON' },
  107: { status: 406, message: 'Input parameter errors' },
  110: { status: 401, message: 'Token invalid/inactive' },
  111: { status: 406, message: 'Generic method-level validation error' },
  112: { status: 404, message: 'Requested resource does not exist' },
  113: { status: 403, message: 'Access denied on required ACLs' },
  114: { status: 406, message: 'Dry-run option not allowed' },
  115: { status: 429, message: 'Too many requests' },
  10000001: { status: 406, message: 'Invalid e-mail address' },
  10010001: { status: 406, message: 'Invalid avatar request' },
  10020001: { status: 500, message: 'Failure in avatar housekeeping' },
} as const satisfies Record<number, { status: number; message: string }>;

export type ErrorCode = keyof typeof catalogue;

/** Names for the codes, so call sites read as intent rather than numbers. */
export const Code = {
  NoRequest: 1,
  Internal: 2,
  DatabaseNotConfigured: 3,
  DatabaseUnavailable: 4,
  CommitFailed: 5,
  InvalidParameterType: 6,
  ValidationUnavailable: 7,
  ActionNotMapped: 8,
  ValidatorFailed: 9,
  EndpointNotConfigured: 100,
  Options: 101,
  MethodNotAllowed: 102,
  IpBlocked: 103,
  AuthorizationMissing: 104,
  TokenExpired: 105,
  InvalidJson: 106,
  InvalidInput: 107,
  TokenInvalid: 110,
  MethodValidation: 111,
  NotFound: 112,
  AccessDenied: 113,
  DryRunNotAllowed: 114,
  TooManyRequests: 115,
  InvalidEmail: 10000001,
  InvalidAvatarRequest: 10010001,
  HousekeepingFailed: 10020001,
} as const satisfies Record<string, ErrorCode>;

export function statusOf(code: ErrorCode): number {
  return catalogue[code].status;
}
