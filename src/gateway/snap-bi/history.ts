/**
 * The BI-SNAP transaction history of one account: the list (`/v1.0/transaction-history-list`,
 * service 12) read page by page, and one transaction's detail (`/v1.0/transaction-history-detail`,
 * service 13), each item as a report row. Every page is one signed call under the client's
 * timeout and a fresh X-EXTERNAL-ID; any refusal, failure or unreadable item rejects the whole
 * listing, so part of a day is never taken for the whole of it.
 *
 * Read as documented: `additionalInfo.partnerReferenceNo` is the gateway order id,
 * `additionalInfo.referenceNo` the transaction id, `additionalInfo.status` the gateway's status
 * word (SETTLEMENT, REFUND, …), `additionalInfo.fee` the fee. Unconfirmed, and chosen so: pages
 * are numbered from 1; the listing ends at the first page shorter than the page size (no total is
 * documented); `amount` ("net amount of the transaction") is taken as what the customer paid, with
 * the fee apart (its samples do not settle whether the fee is already taken off); `dateTime` of a
 * paid item is its settlement time; the detail's `updatedTime`, `payment` and `fee` are read under
 * `additionalInfo`.
 */
import { randomInt } from 'node:crypto';
import type { ReportRow } from '../../model/reconciliation.js';
import { jakartaIsoOf, toJakartaIso } from '../../platform/time.js';
import { GatewayError } from '../port.js';
import type { HistoryDetail, TransactionHistory } from '../history.js';
import type { SnapBiAnswer, SnapBiClient } from './client.js';

export const HISTORY_LIST_PATH = '/v1.0/transaction-history-list';
export const HISTORY_DETAIL_PATH = '/v1.0/transaction-history-detail';
/** The largest page the gateway serves. */
export const HISTORY_PAGE_SIZE = 50;
/** Pages read for one listing at most: 200 pages of 50 is 10,000 payments a day. */
export const DEFAULT_MAX_PAGES = 200;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (o: Obj, k: string): string | undefined => (typeof o[k] === 'string' ? (o[k] as string) : undefined);

/** X-EXTERNAL-ID: numeric, at most 36 characters, unique within the day. */
function externalId(): string {
  let s = '';
  while (s.length < 32) s += String(randomInt(0, 1_000_000_000)).padStart(9, '0');
  return s.slice(0, 32);
}

/** Whole rupiah of `{value: "150000.00", currency: "IDR"}`; undefined when absent, a bad answer when malformed. */
function rupiah(v: unknown, what: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const value = isObj(v) ? v.value : undefined;
  if (!isObj(v) || (v.currency !== undefined && v.currency !== 'IDR') || typeof value !== 'string')
    throw new GatewayError('bad_response', `history: ${what} is not an IDR amount`);
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(value);
  if (!m || (m[2] !== undefined && Number(m[2]) !== 0))
    throw new GatewayError('bad_response', `history: ${what} is not a whole rupiah amount`);
  return Number(m[1]);
}

/** Chargebacks are told apart from the merchant's refunds, as the withdrawal report's Refund Type does. */
function refundType(status: string): 'chargeback' | null {
  return status.includes('chargeback') ? 'chargeback' : null;
}

/** One history item as a report row; `line` is its position in the whole listing (1 = first). */
export function historyRow(item: unknown, line: number): ReportRow {
  if (!isObj(item)) throw new GatewayError('bad_response', `history: item ${line} is not an object`);
  const info = isObj(item.additionalInfo) ? item.additionalInfo : {};
  const orderId = str(info, 'partnerReferenceNo');
  const status = (str(info, 'status') ?? '').trim().toLowerCase();
  const amount = rupiah(item.amount, `item ${line} amount`);
  if (!orderId || orderId.length > 200 || status === '' || amount === undefined)
    throw new GatewayError('bad_response', `history: item ${line} lacks an order id, a status or an amount`);
  const when = str(item, 'dateTime');
  const time = when === undefined ? null : jakartaIsoOf(when);
  if (when !== undefined && time === null)
    throw new GatewayError('bad_response', `history: item ${line} has an unreadable dateTime`);
  const fee = rupiah(info.fee, `item ${line} fee`) ?? null;
  return {
    line,
    orderId,
    transactionId: str(info, 'referenceNo') ?? null,
    status,
    amount,
    fee,
    // Completed from the fee by the reconciliation under its own rule (net = amount − fee).
    net: null,
    originalAmount: null,
    paymentType: str(info, 'channel') ?? null,
    transactionTime: null,
    settlementTime: time,
    refundType: refundType(status),
  };
}

export class SnapBiHistory implements TransactionHistory {
  private readonly maxPages: number;

  constructor(
    private readonly client: SnapBiClient,
    private readonly hasCredentials: () => Promise<boolean>,
    o: { maxPages?: number } = {},
  ) {
    this.maxPages = o.maxPages ?? DEFAULT_MAX_PAGES;
  }

  configured(): Promise<boolean> {
    return this.hasCredentials();
  }

  async list(from: Date, to: Date): Promise<ReportRow[]> {
    const rows: ReportRow[] = [];
    for (let page = 1; ; page++) {
      if (page > this.maxPages)
        throw new GatewayError(
          'bad_response',
          `history: more than ${this.maxPages} pages of ${HISTORY_PAGE_SIZE} between ${toJakartaIso(from)} and ${toJakartaIso(to)}`,
        );
      const a = await this.client.call(
        'history_list',
        HISTORY_LIST_PATH,
        {
          fromDateTime: toJakartaIso(from),
          toDateTime: toJakartaIso(to),
          pageSize: HISTORY_PAGE_SIZE,
          pageNumber: page,
          sortOrder: 'ASC',
          additionalInfo: { types: ['PAYMENT'] },
        },
        externalId(),
      );
      refuseUnless(a, '2001200');
      const items = a.body.detailData ?? [];
      if (!Array.isArray(items)) throw new GatewayError('bad_response', 'history: detailData is not a list');
      if (items.length > HISTORY_PAGE_SIZE)
        throw new GatewayError('bad_response', `history: a page of ${items.length} items, above its size`);
      for (const item of items) rows.push(historyRow(item, rows.length + 1));
      if (items.length < HISTORY_PAGE_SIZE) return rows;
    }
  }

  async detail(gatewayOrderId: string, transactionId?: string): Promise<HistoryDetail | undefined> {
    const a = await this.client.call(
      'history_detail',
      HISTORY_DETAIL_PATH,
      {
        originalPartnerReferenceNo: gatewayOrderId,
        ...(transactionId ? { additionalInfo: { referenceNo: transactionId } } : {}),
      },
      externalId(),
    );
    if (/^404\d{2}01$/.test(a.responseCode)) return undefined;
    refuseUnless(a, '2001300');
    const row = historyRow(a.body, 1);
    const info = isObj(a.body.additionalInfo) ? a.body.additionalInfo : {};
    const payment = isObj(info.payment) ? info.payment : {};
    const p = isObj(payment.promo) ? payment.promo : undefined;
    const original = p ? rupiah(p.originalAmount, 'promo originalAmount') : undefined;
    const discount = p ? rupiah(p.discountAmount, 'promo discountAmount') : undefined;
    const promo =
      p && original !== undefined
        ? { code: str(p, 'code') ?? null, originalAmount: original, discountAmount: discount ?? 0 }
        : null;
    const refunds = (Array.isArray(payment.refunds) ? payment.refunds : []).map((r, i) => {
      const o = isObj(r) ? r : {};
      const amount = rupiah(o.amount ?? o.refundAmount, `refund ${i + 1} amount`);
      if (amount === undefined) throw new GatewayError('bad_response', `history: refund ${i + 1} has no amount`);
      return { amount, time: jakartaIsoOf(str(o, 'createdTime') ?? str(o, 'refundTime')) };
    });
    return {
      row: promo ? { ...row, originalAmount: promo.originalAmount } : row,
      updatedTime: jakartaIsoOf(str(info, 'updatedTime')),
      promo,
      refunds,
    };
  }
}

function refuseUnless(a: SnapBiAnswer, success: string): void {
  if (a.responseCode !== success)
    throw GatewayError.refused({ code: a.responseCode, message: a.responseMessage || 'refused' });
}
