/** Alerts to an operator's receiver: what is wrong, about what, since when. */

export const ALERT_KINDS = [
  'erp_delivery_dead',
  'erp_endpoint_failing',
  'payment_stuck_pending',
  'gateway_unreachable',
  'reconciliation_mismatch',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

export interface AlertRecord {
  id: number;
  account: string;
  alert: AlertKind;
  /** What it is about: an event id, an endpoint, an order id, an import id. */
  subject: string;
  summary: string;
  details: Record<string, unknown>;
  startedAt: string;
  /** Null while it is firing. */
  resolvedAt: string | null;
}

export interface NewAlert {
  alert: AlertKind;
  subject: string;
  summary: string;
  details: Record<string, unknown>;
}
