/**
 * The accounting view: per day and payment type, what was paid, refunded, charged as fees and what
 * is left. A payment counts on the day it was paid (its settlement time, else its transaction time)
 * in the chosen time zone, with everything refunded of it so far: a day's row is that day's
 * payments, so the rows of a period add up to the amounts of its payments in `/api/transactions`.
 */
import type { Actor } from '../audit.js';
import { listedAccounts } from '../operators/access.js';
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { AppError } from '../../platform/errors.js';
import { jakartaDayEnd, jakartaDayStart, toJakartaIso } from '../../platform/time.js';

export const DEFAULT_REPORT_TIME_ZONE = 'Asia/Jakarta';
/** Longest period one report covers, days. */
export const MAX_REPORT_DAYS = 366;

export interface DailyRow {
  date: string;
  payment_type: string;
  paid_count: number;
  paid_amount: number;
  refunded_amount: number;
  net_amount: number;
  /** Null when no payment of the row has a fee known (fees come from imported gateway reports). */
  fee_amount: number | null;
}

export interface DailyQuery {
  /** Only this account's payments; every account's when absent. */
  account?: string;
  from: string;
  to: string;
  timeZone?: string;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function validDay(s: string, field: string): void {
  if (
    !DAY.test(s) ||
    Number.isNaN(Date.parse(`${s}T00:00:00Z`)) ||
    new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) !== s
  ) {
    throw new AppError('VALIDATION_FAILED', `${field} must be a date YYYY-MM-DD.`, {
      errors: [{ path: field, message: 'must be a date YYYY-MM-DD' }],
    });
  }
}

/** The calendar day of `iso` in `timeZone`. */
function dayIn(formatter: Intl.DateTimeFormat, iso: string): string {
  const parts = formatter.formatToParts(new Date(iso));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

function dayFormatter(timeZone: string): Intl.DateTimeFormat {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  } catch {
    throw new AppError(
      'VALIDATION_FAILED',
      `tz ${JSON.stringify(timeZone.slice(0, 60))} is not a time zone; use an IANA name such as Asia/Jakarta.`,
      { errors: [{ path: 'tz', message: 'must be an IANA time zone name' }] },
    );
  }
}

/**
 * One row per day and payment type with any payment, in date then payment-type order; of the
 * accounts `actor` may see when given (the service's own totals otherwise).
 */
export async function dailyReport(services: Deps<'store'>, q: DailyQuery, actor?: Actor): Promise<DailyRow[]> {
  validDay(q.from, 'from');
  validDay(q.to, 'to');
  if (q.from > q.to)
    throw new AppError('VALIDATION_FAILED', 'from must not be after to.', {
      errors: [{ path: 'from', message: 'must not be after to' }],
    });
  const days = (Date.parse(q.to) - Date.parse(q.from)) / 86_400_000 + 1;
  if (days > MAX_REPORT_DAYS)
    throw new AppError('VALIDATION_FAILED', `A report covers at most ${MAX_REPORT_DAYS} days.`, {
      errors: [{ path: 'to', message: `at most ${MAX_REPORT_DAYS} days after from` }],
    });
  const formatter = dayFormatter(q.timeZone ?? DEFAULT_REPORT_TIME_ZONE);
  // Stored payment times are Jakarta text; a day elsewhere starts at most 14 h off Jakarta's.
  const from = new Date(Date.parse(jakartaDayStart(q.from)) - 86_400_000);
  const to = new Date(Date.parse(jakartaDayEnd(q.to)) + 86_400_000);
  const groups = new Map<string, DailyRow>();
  let after = '';
  for (;;) {
    const page = await services.store.transactions.listMoneyMovedBetween(
      toJakartaIso(from),
      toJakartaIso(to),
      after,
      1000,
      actor ? listedAccounts(actor, q.account) : q.account === undefined ? undefined : [q.account],
    );
    for (const tx of page) add(groups, formatter, tx, q);
    if (page.length < 1000) break;
    after = page.at(-1)?.id ?? after;
  }
  return [...groups.values()].sort(
    (a, b) => a.date.localeCompare(b.date) || a.payment_type.localeCompare(b.payment_type),
  );
}

function add(
  groups: Map<string, DailyRow>,
  formatter: Intl.DateTimeFormat,
  tx: TransactionRecord,
  q: DailyQuery,
): void {
  const paidAt = tx.settlementTime ?? tx.transactionTime;
  if (paidAt === null) return;
  const date = dayIn(formatter, paidAt);
  if (date < q.from || date > q.to) return;
  const type = tx.paymentType ?? 'unknown';
  const key = `${date}|${type}`;
  const row = groups.get(key) ?? {
    date,
    payment_type: type,
    paid_count: 0,
    paid_amount: 0,
    refunded_amount: 0,
    net_amount: 0,
    fee_amount: null,
  };
  const paid = tx.paidAmount ?? tx.nominal;
  row.paid_count++;
  row.paid_amount += paid;
  row.refunded_amount += tx.refundedAmount;
  if (tx.feeAmount !== null) row.fee_amount = (row.fee_amount ?? 0) + tx.feeAmount;
  row.net_amount = row.paid_amount - row.refunded_amount - (row.fee_amount ?? 0);
  groups.set(key, row);
}
