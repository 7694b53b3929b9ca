/**
 * A gateway report — a notification body or a status-API answer — reduced to the fields the
 * pipeline uses. Parsed leniently: unknown fields are ignored, non-string values are dropped.
 */
import { createHash } from 'node:crypto';
import type { CoreResponse } from './wire.js';

export interface GatewayReport {
  order_id: string;
  status_code: string;
  gross_amount: string;
  transaction_status?: string;
  fraud_status?: string;
  transaction_id?: string;
  payment_type?: string;
  transaction_time?: string;
  settlement_time?: string;
  signature_key?: string;
  permata_va_number?: string;
  store?: string;
  /** Cumulative rupiah refunded (`"25000.00"`), on refund reports. */
  refund_amount?: string;
}

const FIELDS = ['order_id', 'status_code', 'gross_amount', 'transaction_status', 'fraud_status', 'transaction_id', 'payment_type', 'transaction_time', 'settlement_time', 'signature_key', 'permata_va_number', 'store', 'refund_amount'] as const;
const MAX_FIELD = 512;

/** The fields the gateway's signature covers. */
export const SIGNED_FIELDS = ['order_id', 'status_code', 'gross_amount'] as const;

/**
 * Picks the known string fields. Undefined when a field needed to verify the signature is missing.
 * A NUL (U+0000) — which PostgreSQL text cannot hold and no gateway field has — becomes U+FFFD, so
 * the record keeps what arrived, visibly marked; `replaced` names those fields. A signed field
 * changed this way no longer verifies, so callers refuse those before the signature check.
 */
export function parseReport(raw: Record<string, unknown>): { report?: GatewayReport; missing: string[]; replaced: string[] } {
  const picked: Record<string, string> = {};
  const replaced: string[] = [];
  for (const f of FIELDS) {
    const v = raw[f];
    if (typeof v !== 'string' || v.length > MAX_FIELD) continue;
    picked[f] = v.includes('\u0000') ? v.replace(/\u0000/g, '\uFFFD') : v;
    if (picked[f] !== v) replaced.push(f);
  }
  const missing = SIGNED_FIELDS.filter((f) => picked[f] === undefined || picked[f] === '');
  if (missing.length > 0) return { missing, replaced };
  const report: GatewayReport = { order_id: picked.order_id ?? '', status_code: picked.status_code ?? '', gross_amount: picked.gross_amount ?? '' };
  for (const f of FIELDS) {
    const v = picked[f];
    if (v !== undefined) Object.assign(report, { [f]: v });
  }
  return { report, missing, replaced };
}

/** A status-API answer as a report; `fallback` fills what the answer leaves out. */
export function reportFromStatus(st: CoreResponse, fallback: { order_id: string; gross_amount: string }): GatewayReport {
  const { report } = parseReport({ ...st, order_id: st.order_id ?? fallback.order_id, gross_amount: st.gross_amount ?? fallback.gross_amount });
  return report ?? { order_id: fallback.order_id, status_code: st.status_code, gross_amount: fallback.gross_amount };
}

/** Same gateway fact → same key: order, gateway transaction, statuses, code and amount as received. */
export function dedupeKey(r: GatewayReport): string {
  const parts = [r.order_id, r.transaction_id ?? '', r.transaction_status ?? '', r.fraud_status ?? '', r.status_code, r.gross_amount];
  // A second partial refund repeats every other field: its new cumulative amount is what makes it news.
  if (r.refund_amount !== undefined) parts.push(r.refund_amount);
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** Whole rupiah from the gateway's `"150000.00"`; undefined when it is not a plain non-negative decimal. */
export function grossToNumber(s: string): number | undefined {
  if (!/^\d{1,16}(\.\d{1,2})?$/.test(s.trim())) return undefined;
  return Math.round(Number(s.trim()));
}

