/**
 * A gateway report — a notification body or a status-API answer — reduced to the fields the
 * pipeline uses. Parsed leniently: unknown fields are ignored, non-string values are dropped.
 */
import { Type, type TOptional, type TUnknown } from 'typebox';
import type { GatewayAnswer } from './answer.js';

/**
 * The fields of a report the pipeline reads, each with what the gateway sends in it: the one list
 * behind `GatewayReport`, the parsing and the webhook body schema. In the order they are stored.
 */
const REPORT_FIELDS = {
  order_id: 'gateway order id (string)',
  status_code: 'string, e.g. "200"',
  gross_amount: 'string, exactly as signed, e.g. "150000.00"',
  transaction_status: 'string',
  fraud_status: 'string, or absent/null',
  transaction_id: 'string',
  payment_type: 'string',
  transaction_time: 'string',
  settlement_time: 'string',
  signature_key: 'SHA-512 hex of order_id + status_code + gross_amount + server key',
  permata_va_number: 'string, on Permata virtual-account payments',
  store: 'string, on convenience-store payments (indomaret, alfamart)',
  refund_amount: 'cumulative rupiah refunded, e.g. "25000.00", on refund reports',
} as const;
type ReportField = keyof typeof REPORT_FIELDS;

/** The fields the gateway's signature covers. */
export const SIGNED_FIELDS = ['order_id', 'status_code', 'gross_amount'] as const satisfies readonly ReportField[];

/**
 * The signed fields always, the others when the gateway sent them as strings; `original_amount` is
 * the amount before a customer-imposed fee (`extra_info.gross_amount_info.original_amount`).
 */
export type GatewayReport = Record<(typeof SIGNED_FIELDS)[number], string> &
  Partial<Record<ReportField | 'original_amount', string>>;

const FIELDS = Object.keys(REPORT_FIELDS) as ReportField[];
const MAX_FIELD = 512;

/**
 * The gateway's notification as the webhook accepts it, parsed leniently: a field of an unexpected
 * type (a `null` `fraud_status`, a numeric time) or any unknown field never costs the notification
 * a 400, since the gateway gives up after two retries of a 400. `parseReport` reads the strings it
 * needs and ignores the rest; the signature decides what is trusted.
 */
export const NotificationBodySchema = Type.Object(
  Object.fromEntries(FIELDS.map((f) => [f, Type.Optional(Type.Unknown({ description: REPORT_FIELDS[f] }))])) as Record<
    ReportField,
    TOptional<TUnknown>
  >,
  { additionalProperties: true, maxProperties: 500 },
);

/**
 * Picks the known string fields. Undefined when a field needed to verify the signature is missing.
 * A NUL (U+0000) — which PostgreSQL text cannot hold and no gateway field has — becomes U+FFFD, so
 * the record keeps what arrived, visibly marked; `replaced` names those fields. A signed field
 * changed this way no longer verifies, so callers refuse those before the signature check.
 */
export function parseReport(raw: Record<string, unknown>): {
  report?: GatewayReport;
  missing: string[];
  replaced: string[];
} {
  return pick(raw, undefined);
}

/**
 * `parseReport`, with `fallback`'s order id and amount where `raw` has none (null or absent). One
 * pass over the known fields, into the report in their order (the stored payload's key order);
 * run twice per confirmed notification (the body, the status answer).
 */
function pick(
  raw: Record<string, unknown>,
  fallback: { order_id: string; gross_amount: string } | undefined,
): { report?: GatewayReport; missing: string[]; replaced: string[] } {
  const picked: Record<string, string> = {};
  const replaced: string[] = [];
  for (const f of FIELDS) {
    let v = raw[f];
    if (fallback !== undefined && v == null && (f === 'order_id' || f === 'gross_amount')) v = fallback[f];
    if (typeof v !== 'string' || v.length > MAX_FIELD) continue;
    if (v.includes('\u0000')) {
      picked[f] = v.replace(/\u0000/g, '\uFFFD');
      replaced.push(f);
    } else picked[f] = v;
  }
  const missing = SIGNED_FIELDS.filter((f) => picked[f] === undefined || picked[f] === '');
  if (missing.length > 0) return { missing, replaced };
  // The signed fields are the first three of FIELDS: `picked` already has the report's shape.
  const report = picked as GatewayReport;
  const original = originalAmount(raw);
  if (original !== undefined) report.original_amount = original;
  return { report, missing, replaced };
}

const field = (o: unknown, k: string): unknown =>
  o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;

/**
 * The amount before a customer-imposed fee, where the gateway reports one: under
 * `extra_info.gross_amount_info` in its documentation, under `metadata.extra_info` in some
 * integrations; a string or a number.
 */
function originalAmount(raw: Record<string, unknown>): string | undefined {
  if (raw.extra_info === undefined && raw.metadata === undefined) return undefined;
  return amountIn(raw.extra_info) ?? amountIn(field(raw.metadata, 'extra_info'));
}

function amountIn(extra: unknown): string | undefined {
  const v = field(field(extra, 'gross_amount_info'), 'original_amount');
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^\d{1,16}(\.\d{1,2})?$/.test(v)) return v;
  return undefined;
}

/** A status-API answer as a report; `fallback` fills what the answer leaves out. */
export function reportFromStatus(
  st: GatewayAnswer,
  fallback: { order_id: string; gross_amount: string },
): GatewayReport {
  const { report } = pick(st, fallback);
  return report ?? { order_id: fallback.order_id, status_code: st.status_code, gross_amount: fallback.gross_amount };
}

/** A payment link's purchases carry the link's order id plus a `-suffix`: each is a gateway transaction of its own. */
export function isPurchaseOf(orderId: string, linkOrderId: string): boolean {
  return orderId.length > linkOrderId.length + 1 && orderId.startsWith(`${linkOrderId}-`);
}

/**
 * The link order ids `id` could be a purchase of (`<link order id>-<suffix>`), longest first: one
 * per `-` from the right, at most four.
 */
export function purchaseBases(id: string): string[] {
  const out: string[] = [];
  let i = id.lastIndexOf('-');
  for (let tries = 0; i > 0 && tries < 4; tries++) {
    out.push(id.slice(0, i));
    i = id.lastIndexOf('-', i - 1);
  }
  return out;
}

/** The gateway's spelling of whole rupiah in reports and signatures: `150000` → `"150000.00"`. */
export function wireAmount(nominal: number): string {
  return `${nominal}.00`;
}

/**
 * The report we write ourselves for a pending transaction past its expiry that the gateway does not
 * know (never used): an `expire` with status code 407, as the gateway reports an expiry.
 */
export function localExpiryReport(
  gatewayOrderId: string,
  nominal: number,
  transactionId: string | null,
): GatewayReport {
  const report: GatewayReport = {
    order_id: gatewayOrderId,
    status_code: '407',
    gross_amount: wireAmount(nominal),
    transaction_status: 'expire',
  };
  if (transactionId) report.transaction_id = transactionId;
  return report;
}

/** Whole rupiah from the gateway's `"150000.00"`; undefined when it is not a plain non-negative decimal. */
export function grossToNumber(s: string): number | undefined {
  if (!/^\d{1,16}(\.\d{1,2})?$/.test(s.trim())) return undefined;
  return Math.round(Number(s.trim()));
}
