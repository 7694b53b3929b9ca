/**
 * The money at a glance, for the console's overview: rupiah paid today, over 7 and 30 days; paid
 * volume per day; and per payment type, how many payments that were started got paid and how long
 * paying took. Days are calendar days in the console's time zone. Computed from the payments of the
 * last 30 days and kept for a minute: an overview is looked at, not polled to the second.
 */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { eachTransaction } from './listing.js';
import { dailyReport, type DailyRow } from './daily-report.js';
import { visibleAccounts } from '../operators/access.js';
import type { Actor } from '../audit.js';

const DAY_MS = 86_400_000;
const WINDOW_DAYS = 30;
const CACHE_MS = 60_000;

/** The per-type key of payments whose payer never chose a method. */
export const NO_PAYMENT_TYPE = 'not chosen';

export interface MoneyOverview {
  /** When these figures were computed (they are kept for a minute). */
  computedAt: string;
  /** Rupiah paid (gross), by when it was paid. */
  paid: { today: number; last7Days: number; last30Days: number };
  /** The last 30 days, oldest first: `YYYY-MM-DD` and rupiah paid that day. */
  perDay: Array<{ date: string; amount: number; count: number }>;
  /** Per payment type among payments created in the last 30 days that ended (paid or not). */
  perType: Array<{
    paymentType: string;
    started: number;
    paid: number;
    successRate: number;
    medianMinutesToPay: number | null;
  }>;
}

const MONEY_MOVED = new Set(['paid', 'partially_refunded', 'refunded', 'chargeback']);
const ENDED_UNPAID = new Set(['failed', 'cancelled', 'expired']);

const cache = new WeakMap<object, { at: number; key: string; value: MoneyOverview }>();

function dayIn(fmt: Intl.DateTimeFormat, t: number): string {
  const parts = fmt.formatToParts(new Date(t));
  const get = (k: string) => parts.find((p) => p.type === k)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** Of the accounts `actor` may see (every account's without an actor). */
export async function moneyOverview(
  services: Deps<'store' | 'clock'>,
  timeZone: string,
  actor?: Actor,
): Promise<MoneyOverview> {
  const now = services.clock.now().getTime();
  const accounts = actor ? visibleAccounts(actor) : undefined;
  const key = `${timeZone}|${accounts?.join(',') ?? '*'}`;
  const hit = cache.get(services.store);
  if (hit && hit.key === key && now - hit.at < CACHE_MS) return hit.value;
  const fmt = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const days = Array.from({ length: WINDOW_DAYS }, (_, i) => dayIn(fmt, now - (WINDOW_DAYS - 1 - i) * DAY_MS));
  const perDay = new Map(days.map((d) => [d, { date: d, amount: 0, count: 0 }]));
  const types = new Map<string, { started: number; paid: number; minutes: number[] }>();
  // A payment paid in the window was created at most a few days before it (links live up to 30 days).
  const since = new Date(now - 2 * WINDOW_DAYS * DAY_MS).toISOString();
  for await (const tx of eachTransaction(services, { since }, actor))
    count(tx, fmt, perDay, types, now - WINDOW_DAYS * DAY_MS);
  const today = days.at(-1) ?? '';
  const sum = (n: number) => days.slice(-n).reduce((a, d) => a + (perDay.get(d)?.amount ?? 0), 0);
  const value: MoneyOverview = {
    computedAt: new Date(now).toISOString(),
    paid: { today: perDay.get(today)?.amount ?? 0, last7Days: sum(7), last30Days: sum(30) },
    perDay: [...perDay.values()],
    perType: [...types]
      .map(([paymentType, t]) => ({
        paymentType,
        started: t.started,
        paid: t.paid,
        successRate: t.started === 0 ? 0 : t.paid / t.started,
        medianMinutesToPay: median(t.minutes),
      }))
      .sort((a, b) => b.started - a.started || a.paymentType.localeCompare(b.paymentType)),
  };
  cache.set(services.store, { at: now, key, value });
  return value;
}

function count(
  tx: TransactionRecord,
  fmt: Intl.DateTimeFormat,
  perDay: Map<string, { amount: number; count: number }>,
  types: Map<string, { started: number; paid: number; minutes: number[] }>,
  windowStart: number,
): void {
  const moved = MONEY_MOVED.has(tx.status);
  const paidAt = tx.settlementTime ?? tx.transactionTime;
  if (moved && paidAt) {
    const day = perDay.get(dayIn(fmt, Date.parse(paidAt)));
    if (day) {
      day.amount += tx.paidAmount ?? tx.nominal;
      day.count++;
    }
  }
  if (Date.parse(tx.createdAt) < windowStart || (!moved && !ENDED_UNPAID.has(tx.status))) return;
  const type = tx.paymentType ?? NO_PAYMENT_TYPE;
  const t = types.get(type) ?? { started: 0, paid: 0, minutes: [] };
  t.started++;
  if (moved) {
    t.paid++;
    if (paidAt) t.minutes.push(Math.max(0, (Date.parse(paidAt) - Date.parse(tx.createdAt)) / 60_000));
  }
  types.set(type, t);
}

/** One period's money, as the daily report has it (its rows of those days added up). */
export interface PeriodTotals {
  /** First and last day, `YYYY-MM-DD` in the time zone asked for. */
  from: string;
  to: string;
  count: number;
  paid: number;
  refunded: number;
  /** Null when no payment of the period has a fee known (fees come from imported settlement reports). */
  fee: number | null;
  net: number;
}

/**
 * The overview's totals, read live from the daily report (never cached): today, the last 7 and 30
 * days, and each of the 30 days, so the overview, its chart and the daily report's CSV give the same
 * figures for the same days. `asOf`: when they were read.
 */
export interface MoneyTotals {
  asOf: string;
  today: PeriodTotals;
  last7Days: PeriodTotals;
  last30Days: PeriodTotals;
  perDay: PeriodTotals[];
}

/** Of the accounts `actor` may see (every account's without an actor). */
export async function moneyTotals(
  services: Deps<'store' | 'clock'>,
  timeZone: string,
  actor?: Actor,
): Promise<MoneyTotals> {
  const now = services.clock.now();
  const fmt = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
  const days = Array.from({ length: WINDOW_DAYS }, (_, i) =>
    dayIn(fmt, now.getTime() - (WINDOW_DAYS - 1 - i) * DAY_MS),
  );
  const first = days[0] ?? '';
  const today = days.at(-1) ?? '';
  const rows = await dailyReport(services, { from: first, to: today, timeZone }, actor);
  const empty = (from: string, to: string): PeriodTotals => ({
    from,
    to,
    count: 0,
    paid: 0,
    refunded: 0,
    fee: null,
    net: 0,
  });
  const add = (into: PeriodTotals, r: DailyRow) => {
    into.count += r.paid_count;
    into.paid += r.paid_amount;
    into.refunded += r.refunded_amount;
    if (r.fee_amount !== null) into.fee = (into.fee ?? 0) + r.fee_amount;
    into.net += r.net_amount;
  };
  const perDay = new Map(days.map((d) => [d, empty(d, d)]));
  for (const r of rows) {
    const day = perDay.get(r.date);
    if (day) add(day, r);
  }
  const period = (n: number): PeriodTotals => {
    const span = days.slice(-n);
    const total = empty(span[0] ?? today, today);
    for (const r of rows) if (r.date >= total.from) add(total, r);
    return total;
  };
  return {
    asOf: now.toISOString(),
    today: period(1),
    last7Days: period(7),
    last30Days: period(WINDOW_DAYS),
    perDay: [...perDay.values()],
  };
}
