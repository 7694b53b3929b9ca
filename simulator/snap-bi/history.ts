/**
 * The gateway's BI-SNAP transaction history: the list (service 12) and one transaction's detail
 * (service 13), from the default merchant's ledger, legacy and BI-SNAP transactions alike. Only
 * payments the customer paid are listed (settled, captured, refunded in part or whole), each once
 * with its current status, at the time it was paid; its fee is assigned from its payment type and
 * amount, so the same transaction always has the same fee.
 *
 * Wire details no public source settles, chosen here and mirrored by paylink's client: pages are
 * numbered from 1; `amount` is what the customer paid (the fee is apart, in `additionalInfo.fee`);
 * the default order is newest first; `fee`, `updatedTime` and `payment` sit under `additionalInfo`.
 */
import type { Merchant } from '../merchants.js';
import type { Txn } from '../state.js';
import { asInteger, isObject, type Json } from '../lib/validate.js';
import type { Answer } from './state.js';
import { amount, wib } from './wire.js';

export const HISTORY_LIST_PATH = '/v1.0/transaction-history-list';
export const HISTORY_DETAIL_PATH = '/v1.0/transaction-history-detail';
export const MAX_PAGE_SIZE = 50;
const TYPES = new Set(['PAYMENT', 'TOP_UP', 'WITHDRAWAL', 'DISBURSEMENT']);
/** The history reaches back this far (the gateway keeps about six months). */
const MAX_SPAN_MS = 183 * 86_400_000;

const answer = (code: string, message: string, extra: Record<string, unknown> = {}): Answer => ({
  status: Number(code.slice(0, 3)),
  body: { responseCode: code, responseMessage: message, ...extra },
});

/** Basis points and a flat part per payment type: what the simulated gateway charges the merchant. */
const FEES: Record<string, { bp: number; flat: number }> = {
  qris: { bp: 70, flat: 0 },
  gopay: { bp: 200, flat: 0 },
  shopeepay: { bp: 200, flat: 0 },
  bank_transfer: { bp: 0, flat: 4_000 },
  echannel: { bp: 0, flat: 4_000 },
  credit_card: { bp: 290, flat: 2_000 },
  cstore: { bp: 0, flat: 5_000 },
};

/** The fee of a transaction: never more than its amount. */
export function feeOf(t: Txn): number {
  const f = FEES[t.payment_type] ?? { bp: 150, flat: 0 };
  return Math.min(t.gross_amount, Math.round((t.gross_amount * f.bp) / 10_000) + f.flat);
}

const PAID = new Set(['settlement', 'capture', 'refund', 'partial_refund']);

/** A listed transaction's time: when it was paid. */
const paidAt = (t: Txn): Date => t.settlement_time ?? t.transaction_time;

/**
 * The promo of a transaction, when its charge's `metadata.promo` names one
 * (`{id?, code?, name?, original_amount, discount_amount}`): the simulator's way to stand for a
 * promo the gateway applied.
 */
function promoOf(t: Txn): Json | undefined {
  const meta = isObject(t.extras.metadata) ? t.extras.metadata : {};
  const p = meta.promo;
  if (!isObject(p)) return undefined;
  const original = asInteger(p.original_amount);
  const discount = asInteger(p.discount_amount);
  if (original === undefined || discount === undefined) return undefined;
  return {
    ...(typeof p.id === 'string' ? { id: p.id } : {}),
    ...(typeof p.code === 'string' ? { code: p.code } : {}),
    ...(typeof p.name === 'string' ? { name: p.name } : {}),
    originalAmount: amount(original),
    discountAmount: amount(discount),
  };
}

function item(t: Txn): Json {
  const status = t.status.toUpperCase();
  return {
    dateTime: wib(paidAt(t)),
    amount: amount(t.gross_amount),
    status: t.status === 'refund' || t.status === 'partial_refund' ? 'REFUNDED' : 'SUCCESS',
    type: 'PAYMENT',
    remark: `Payment ${t.order_id}`,
    additionalInfo: {
      referenceNo: t.transaction_id,
      partnerReferenceNo: t.order_id,
      status,
      type: 'PAYMENT',
      channel: t.payment_type,
      ...(t.customer?.email ? { customerEmail: t.customer.email } : {}),
      fee: amount(feeOf(t)),
    },
  };
}

/** An ISO-8601 time with its offset (`2026-11-27T00:00:00+07:00`), as epoch ms; undefined otherwise. */
function isoTime(v: unknown): number | undefined {
  if (typeof v !== 'string' || v.length > 25) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})$/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `POST /v1.0/transaction-history-list`. */
export function historyList(merchant: Merchant, b: Json): Answer {
  if (b.fromDateTime === undefined || b.toDateTime === undefined)
    return answer('4001202', 'Invalid mandatory field [fromDateTime/toDateTime]');
  const from = isoTime(b.fromDateTime);
  const to = isoTime(b.toDateTime);
  if (from === undefined) return answer('4001201', 'Invalid field format [fromDateTime]');
  if (to === undefined) return answer('4001201', 'Invalid field format [toDateTime]');
  if (from > to || to - from > MAX_SPAN_MS)
    return answer('4001201', 'Invalid field format [fromDateTime/toDateTime: from ≤ to, at most 6 months]');
  const size = b.pageSize === undefined ? 10 : asInteger(b.pageSize);
  if (size === undefined || size < 1 || size > MAX_PAGE_SIZE)
    return answer('4001201', `Invalid field format [pageSize: 1..${MAX_PAGE_SIZE}]`);
  const page = b.pageNumber === undefined ? 1 : asInteger(b.pageNumber);
  if (page === undefined || page < 1 || page > 100_000) return answer('4001201', 'Invalid field format [pageNumber]');
  const order = b.sortOrder ?? 'DESC';
  if (order !== 'ASC' && order !== 'DESC') return answer('4001201', 'Invalid field format [sortOrder]');
  const ref = b.partnerReferenceNo;
  if (ref !== undefined && (typeof ref !== 'string' || ref.length > 64))
    return answer('4001201', 'Invalid field format [partnerReferenceNo]');
  const info = isObject(b.additionalInfo) ? b.additionalInfo : {};
  let types = ['PAYMENT'];
  if (info.types !== undefined) {
    if (!Array.isArray(info.types) || info.types.some((x) => typeof x !== 'string' || !TYPES.has(x)))
      return answer('4001201', 'Invalid field format [additionalInfo.types]');
    types = info.types as string[];
  }
  const payment = isObject(info.payment) ? info.payment : {};
  const statuses = Array.isArray(payment.statuses)
    ? new Set(payment.statuses.filter((s): s is string => typeof s === 'string').map((s) => s.toUpperCase()))
    : undefined;
  const rows = types.includes('PAYMENT')
    ? [...merchant.ledger.txns.values()].filter((t) => {
        if (!PAID.has(t.status)) return false;
        const at = paidAt(t).getTime();
        if (at < from || at > to) return false;
        if (ref && ref !== '' && t.order_id !== ref) return false;
        return !statuses || statuses.has(t.status.toUpperCase());
      })
    : [];
  // A stable order, so that consecutive pages neither repeat nor skip a transaction.
  rows.sort((x, y) => paidAt(x).getTime() - paidAt(y).getTime() || x.transaction_id.localeCompare(y.transaction_id));
  if (order === 'DESC') rows.reverse();
  const slice = rows.slice((page - 1) * size, page * size);
  return answer('2001200', 'Successful', { detailData: slice.map(item) });
}

/** `POST /v1.0/transaction-history-detail`. */
export function historyDetail(merchant: Merchant, b: Json): Answer {
  const id = b.originalPartnerReferenceNo;
  if (typeof id !== 'string' || id === '' || id.length > 64)
    return answer('4001302', 'Invalid mandatory field [originalPartnerReferenceNo]');
  const info = isObject(b.additionalInfo) ? b.additionalInfo : {};
  const ref = info.referenceNo;
  if (ref !== undefined && typeof ref !== 'string')
    return answer('4001301', 'Invalid field format [additionalInfo.referenceNo]');
  const t = merchant.ledger.findTxn(id);
  if (!t || t.order_id !== id || (ref !== undefined && ref !== t.transaction_id) || !PAID.has(t.status))
    return answer('4041301', 'Transaction Not Found');
  const base = item(t);
  const promo = promoOf(t);
  return answer('2001300', 'Successful', {
    ...base,
    additionalInfo: {
      ...(base.additionalInfo as Json),
      updatedTime: wib(t.refunds.at(-1)?.created_at ?? paidAt(t)),
      payment: {
        source: t.source.kind === 'link' ? 'payment_link' : t.source.kind === 'snap' ? 'snap' : 'core_api',
        ...(t.expiry_time ? { expiryTime: wib(t.expiry_time) } : {}),
        refunds: t.refunds.map((r) => ({
          refundId: String(r.refund_chargeback_id),
          amount: amount(r.refund_amount),
          createdTime: wib(r.created_at),
          ...(r.reason ? { reason: r.reason } : {}),
        })),
        ...(promo ? { promo } : {}),
      },
    },
  });
}
