/**
 * Functions that no HTTP route invokes, with what triggers them. Like the route table, this drives
 * the CDK stack (event sources, schedules) and the local host (its event-source loop and timers).
 */
export interface Worker {
  /** Also the function's folder: functions/<id>/handler.ts. */
  readonly id: string;
  readonly trigger:
    | 'send-queue'
    | 'dead-letter-queue'
    | 'schedule'
    | 'ses-events'
    | 'table-stream'
    | 'webhook-queue'
    | 'inbound-queue';
  /** For schedules: minutes between runs. */
  readonly everyMinutes?: number;
  readonly summary: string;
}

export const workers = [
  { id: 'sender', trigger: 'send-queue', summary: 'Claims, composes, DKIM-signs and sends queued messages' },
  {
    id: 'dead-letter',
    trigger: 'dead-letter-queue',
    summary: 'Marks messages the queue gave up on as failed',
  },
  {
    id: 'dispatcher',
    trigger: 'schedule',
    everyMinutes: 1,
    summary: 'Queues due scheduled messages; re-queues stranded ones',
  },
  {
    id: 'delivery-events',
    trigger: 'ses-events',
    summary: 'Records SES delivery, bounce and complaint events',
  },
  {
    id: 'webhook-fanout',
    trigger: 'table-stream',
    summary: 'Turns committed message changes (table stream) into webhook events, one queue job per endpoint',
  },
  {
    id: 'webhook-delivery',
    trigger: 'webhook-queue',
    summary: 'Delivers webhook events: signed POSTs, retried on the schedule, dead-lettered after the last',
  },
  {
    id: 'inbound',
    trigger: 'inbound-queue',
    summary: 'Parses mail the receiving domains received (stored in S3 by SES) and stores it for its account',
  },
] as const satisfies readonly Worker[];

/** The POST /keepalive-1.0 function also runs on a schedule (EventBridge invokes it directly). */
export const scheduledRoutes = [{ routeId: 'keepalive-run', everyMinutes: 60 }] as const;
