/**
 * Short socket timeouts and three attempts keep an unreachable service from stalling a request.
 * Without throwOnRequestTimeout the SDK only logs a warning when requestTimeout passes and keeps
 * waiting: a store that accepts connections but never answers would hang the request.
 */
export const sdkTimeouts = {
  connectionTimeout: 1_000,
  requestTimeout: 5_000,
  throwOnRequestTimeout: true,
} as const;
