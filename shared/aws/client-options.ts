/** Short socket timeouts and three attempts keep an unreachable service from stalling a request. */
export const sdkTimeouts = { connectionTimeout: 1_000, requestTimeout: 5_000 } as const;
