import { formatDate } from '../../platform/time/format.ts';

/** One recipient's open or click record as stored by the tracking wing (docs/tracking.md). */
export interface TrackingRecord {
  kind: 'open' | 'click';
  recipient_index: number;
  hits: number;
  first_at: string;
  human_first_at?: string;
  last: {
    at: string;
    user_agent: string;
    client_address: string | null;
    machine_open: boolean;
    link?: string;
    link_index?: number;
  };
}

const hitView = (last: TrackingRecord['last']) => ({
  at: formatDate(last.at),
  user_agent: last.user_agent,
  client_address: last.client_address,
  machine_open: last.machine_open,
  ...(last.link === undefined ? {} : { link: last.link }),
  ...(last.link_index === undefined ? {} : { link_index: last.link_index }),
});

/** The `tracking` member of each recipient of a query by uuid, by recipient position. */
export function trackingViews(records: readonly TrackingRecord[]): Map<number, Record<string, unknown>> {
  const views = new Map<number, Record<string, unknown>>();
  for (const record of records) {
    const view = views.get(record.recipient_index) ?? { opens: 0, clicks: 0 };
    if (record.kind === 'open') {
      view.opens = record.hits;
      view.first_opened_at = formatDate(record.first_at);
      if (record.human_first_at !== undefined) view.first_human_open_at = formatDate(record.human_first_at);
      view.last_open = hitView(record.last);
    } else {
      view.clicks = record.hits;
      view.first_clicked_at = formatDate(record.first_at);
      view.last_click = hitView(record.last);
    }
    views.set(record.recipient_index, view);
  }
  return views;
}
