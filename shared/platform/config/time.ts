import { envString } from './env.ts';

/** IANA time zone in which every returned date is expressed. */
export const serverTimeZone = envString('SERVER_TZ', 'UTC') as string;
