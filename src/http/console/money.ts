/**
 * The money parts of the console: the overview's rupiah totals and charts, and one payment's money.
 * Every figure a chart draws is in a table beside it too (a chart is a picture; the table is what a
 * screen reader, a copy-paste and a narrow screen get).
 */
import type { Actor } from '../../domain/audit.js';
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import {
  NO_PAYMENT_TYPE,
  moneyOverview,
  moneyTotals,
  type MoneyOverview,
  type MoneyTotals,
  type PeriodTotals,
} from '../../domain/queries/money-overview.js';
import { formatRupiah, translator, type Lang, type Translate } from '../../platform/i18n.js';
import { MONEY_MESSAGES, type MoneyKey } from './i18n/money.js';
import { paymentTypeWord } from './i18n/glossary.js';
import { transactionView } from '../api/transactions/views.js';
import { barChart, columnChart } from './charts.js';
import { html, type Html } from './html.js';
import type { View } from './view.js';

type T = Translate<MoneyKey>;

function number(lang: Lang, n: number, digits = 1): string {
  return new Intl.NumberFormat(lang === 'id' ? 'id-ID' : 'en-US', { maximumFractionDigits: digits }).format(n);
}

/** Minutes under an hour and a half as minutes, longer as hours: a time to pay reads best in the larger unit. */
function duration(t: T, lang: Lang, minutes: number | null): string {
  if (minutes === null) return '—';
  return minutes < 90
    ? t('minutes', { n: number(lang, minutes, minutes < 10 ? 1 : 0) })
    : t('hours', { n: number(lang, minutes / 60) });
}

/**
 * A chart drawn twice, for a wide and for a narrow screen (the stylesheet shows one): an SVG scales
 * its labels with its width, so one drawing cannot read well at both 1280 and 375 pixels.
 */
function responsive(wide: Html, narrow: Html): Html {
  return html`<div class="chart-wide">${wide}</div><div class="chart-narrow">${narrow}</div>`;
}

function typeName(t: T, lang: Lang, type: string): string {
  return type === NO_PAYMENT_TYPE ? t('notChosen') : paymentTypeWord(lang, type);
}

function totals(t: T, v: View, m: MoneyTotals): Html {
  const card = (key: 'today' | 'last7Days' | 'last30Days', attr: string, p: PeriodTotals) => {
    const sheet = `/console/reports/daily?from=${p.from}&to=${p.to}&sep=${v.lang === 'id' ? '%3B' : '%2C'}&lang=${v.lang}`;
    return html`<section class="card money" aria-labelledby="h-money-${attr}"><h3 id="h-money-${attr}">${t(key)}</h3><p><strong data-money="${attr}">${formatRupiah(p.paid)}</strong></p>
<dl class="kv"><dt>${t('cardPayments')}</dt><dd data-money="${attr}-count">${p.count}</dd><dt>${t('cardRefunded')}</dt><dd data-money="${attr}-refunded">${formatRupiah(p.refunded)}</dd>${p.fee === null ? '' : html`<dt>${t('cardFee')}</dt><dd data-money="${attr}-fee">${formatRupiah(p.fee)}</dd>`}<dt>${t('cardNet')}</dt><dd data-money="${attr}-net">${formatRupiah(p.net)}</dd></dl>
<p class="muted"><a href="${sheet}" data-download="daily-${attr}">${t('cardDownload')}</a></p></section>`;
  };
  return html`<h2 id="h-money">${t('moneyPaid')}</h2>
<p class="muted" data-as-of="${m.asOf}">${t('totalsLive', { time: v.when(m.asOf) })}</p>
<div class="cards" role="group" aria-labelledby="h-money">${card('today', 'today', m.today)}${card('last7Days', '7d', m.last7Days)}${card('last30Days', '30d', m.last30Days)}</div>`;
}

function perDay(t: T, m: MoneyTotals): Html {
  const bars = m.perDay.map((d) => ({ label: d.from.slice(5), value: d.paid, text: formatRupiah(d.paid) }));
  // Drawn about as wide as the page shows it, so its labels read at their own size.
  return html`<h2 id="h-per-day">${t('perDayTitle')}</h2>
<section class="card" aria-labelledby="h-per-day">
${responsive(
  columnChart({
    id: 'chart-per-day',
    title: t('perDayTitle'),
    description: t('perDayDesc'),
    bars,
    width: 1100,
    fontSize: 12,
  }),
  columnChart({
    id: 'chart-per-day-narrow',
    title: t('perDayTitle'),
    description: t('perDayDesc'),
    bars,
    width: 340,
    fontSize: 12,
    labelEvery: 7,
  }),
)}
<details><summary>${t('perDayTable')}</summary><div class="table-wrap"><table><thead><tr><th scope="col">${t('day')}</th><th scope="col" class="num">${t('payments')}</th><th scope="col" class="num">${t('amount')}</th><th scope="col" class="num">${t('cardRefunded')}</th><th scope="col" class="num">${t('cardNet')}</th></tr></thead>
<tbody>${[...m.perDay].reverse().map((d) => html`<tr><td>${d.from}</td><td class="num">${d.count}</td><td class="num" data-day="${d.from}">${formatRupiah(d.paid)}</td><td class="num">${formatRupiah(d.refunded)}</td><td class="num">${formatRupiah(d.net)}</td></tr>`)}</tbody></table></div></details>
</section>`;
}

function perType(t: T, lang: Lang, m: MoneyOverview): Html {
  const heading = html`<h2 id="h-per-type">${t('byTypeTitle')}</h2>`;
  if (m.perType.length === 0) return html`${heading}<p class="muted">${t('noneYet')}</p>`;
  const rate = (p: MoneyOverview['perType'][number]) =>
    t('rateText', { pct: Math.round(p.successRate * 100), paid: p.paid, started: p.started });
  const success = m.perType.map((p) => ({
    label: typeName(t, lang, p.paymentType),
    value: p.successRate,
    text: rate(p),
  }));
  const time = m.perType.map((p) => ({
    label: typeName(t, lang, p.paymentType),
    value: p.medianMinutesToPay ?? 0,
    text: duration(t, lang, p.medianMinutesToPay),
  }));
  return html`${heading}
<div class="cards">
<section class="card" aria-labelledby="h-success"><h3 id="h-success">${t('successTitle')}</h3>
${responsive(
  barChart({
    id: 'chart-success',
    title: t('successTitle'),
    description: t('successDesc'),
    bars: success,
    max: 1,
    width: 460,
    fontSize: 12,
  }),
  barChart({
    id: 'chart-success-narrow',
    title: t('successTitle'),
    description: t('successDesc'),
    bars: success,
    max: 1,
    width: 320,
    fontSize: 12,
  }),
)}
<div class="table-wrap"><table><thead><tr><th scope="col">${t('paymentType')}</th><th scope="col" class="num">${t('started')}</th><th scope="col" class="num">${t('paidCount')}</th><th scope="col" class="num">${t('successRate')}</th><th scope="col" class="num">${t('medianTime')}</th></tr></thead>
<tbody>${m.perType.map((p) => html`<tr data-type="${p.paymentType}"><td>${typeName(t, lang, p.paymentType)}</td><td class="num">${p.started}</td><td class="num">${p.paid}</td><td class="num">${Math.round(p.successRate * 100)}%</td><td class="num">${duration(t, lang, p.medianMinutesToPay)}</td></tr>`)}</tbody></table></div>
</section>
<section class="card" aria-labelledby="h-time"><h3 id="h-time">${t('timeTitle')}</h3>
${responsive(
  barChart({
    id: 'chart-time-to-pay',
    title: t('timeTitle'),
    description: t('timeDesc'),
    bars: time,
    width: 460,
    fontSize: 12,
  }),
  barChart({
    id: 'chart-time-to-pay-narrow',
    title: t('timeTitle'),
    description: t('timeDesc'),
    bars: time,
    width: 320,
    fontSize: 12,
  }),
)}
</section>
</div>`;
}

/** The overview's money: totals for today, 7 and 30 days, paid volume per day, and per payment type how often and how fast people pay. */
export async function overviewMoneySection(services: Deps<'store' | 'clock'>, view: View, actor: Actor): Promise<Html> {
  const { lang } = view;
  const t = translator(MONEY_MESSAGES, lang);
  const [live, m] = await Promise.all([
    moneyTotals(services, view.timeZone, actor),
    moneyOverview(services, view.timeZone, actor),
  ]);
  return html`${totals(t, view, live)}
${perDay(t, live)}
${perType(t, lang, m)}
<p class="muted" data-computed-at="${m.computedAt}">${t('typesAsOf', { time: view.when(m.computedAt) })}</p>`;
}

/** One payment's money: what was expected and paid, the fee and net once a report gave them, refunds, settlement; a warning when the amount paid is not the order's. */
export function paymentMoneySection(tx: TransactionRecord, view: View): Html {
  const t = translator(MONEY_MESSAGES, view.lang);
  const v = transactionView(tx);
  const rp = (n: number | null) => formatRupiah(n, t('notYet'));
  const paid = v.paid_amount;
  // What the mismatch is about: the amount before a promo or an imposed fee when the gateway gives one, else the amount paid.
  const reported = v.original_amount ?? paid;
  return html`<section class="card" aria-labelledby="h-money"><h2 id="h-money">${t('money')}</h2>
${v.amount_mismatch ? html`<div class="alert error" role="alert" data-warning="amount_mismatch"><p>${t('mismatchWarning', { paid: formatRupiah(reported), expected: formatRupiah(v.nominal) })}</p></div>` : ''}
<dl class="kv">
<dt>${t('expected')}</dt><dd data-money="expected">${formatRupiah(v.nominal)}</dd>
<dt>${t('paid')}</dt><dd data-money="paid">${rp(paid)}</dd>
${v.original_amount !== null && v.original_amount !== (paid ?? v.nominal) ? html`<dt>${t('original')}</dt><dd data-money="original">${formatRupiah(v.original_amount)}</dd>` : ''}
<dt>${t('fee')}</dt><dd data-money="fee">${rp(v.fee_amount)}${v.fee_amount !== null ? html` <span class="muted">(${t('fromReport')})</span>` : ''}</dd>
<dt>${t('net')}</dt><dd data-money="net">${rp(v.net_amount)}</dd>
<dt>${t('refunded')}</dt><dd data-money="refunded">${formatRupiah(v.refunded_amount)}</dd>
<dt>${t('settledAt')}</dt><dd data-money="settled">${v.settlement_time ? view.when(v.settlement_time) : t('notYet')}</dd>
</dl></section>`;
}
