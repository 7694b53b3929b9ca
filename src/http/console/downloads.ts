/**
 * The console's downloads: the transaction list with the page's filters and the daily report, for
 * chosen days (this month unless chosen), as CSV with `,`, the API's column names and its codes (a
 * program's file), or as a spreadsheet with `;`, headers in the page's language and codes in words
 * (a person's file): a payment type, a status, a gateway status, a kind and yes/no read as the
 * console's pages write them, from the same catalogue (`View.word`). Amounts stay whole rupiah
 * numbers and times ISO 8601 in both, so a spreadsheet's sums work in either language.
 */
import { operatorActor } from '../plugins/actor.js';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { translator, type Translate } from '../../platform/i18n.js';
import { OptionalStr } from '../schemas/common.js';
import { CSV_BOM, CSV_CONTENT_TYPE, csvLine, type Cell, type CsvSeparator } from '../csv.js';
import { TransactionSchema, transactionView, type TransactionView } from '../api/transactions/views.js';
import { dailyReport, type DailyRow } from '../../domain/queries/daily-report.js';
import { eachSearchedTransaction } from '../../domain/queries/listing.js';
import { DOWNLOAD_MESSAGES, type DownloadKey } from './i18n/downloads.js';
import { LangQuery, consoleDoc } from './context.js';
import { consoleContext } from './scope.js';
import { html, type Html } from './html.js';
import { searchOf, type ListQuery } from './transactions.js';
import type { View } from './view.js';

const TX_COLUMNS = Object.keys(TransactionSchema.properties) as Array<keyof TransactionView>;
const DAILY_COLUMNS = [
  'date',
  'payment_type',
  'paid_count',
  'paid_amount',
  'refunded_amount',
  'net_amount',
  'fee_amount',
] as const satisfies readonly (keyof DailyRow)[];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The first and last day of the month `now` falls in, up to today, in `timeZone`. */
export function thisMonth(now: Date, timeZone: string): { from: string; to: string } {
  const today = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(now);
  return { from: `${today.slice(0, 8)}01`, to: today };
}

/** A column without a word of its own keeps its API name. */
function headers(t: Translate<DownloadKey>, columns: readonly string[], sep: CsvSeparator): string[] {
  const has = (k: string): k is DownloadKey => Object.hasOwn(DOWNLOAD_MESSAGES.en, k);
  return sep === ',' ? [...columns] : columns.map((c) => (has(`h_${c}`) ? t(`h_${c}` as DownloadKey) : c));
}

/** The columns of the API's codes that the spreadsheet writes in words, by the catalogue's prefix. */
const WORDED: Readonly<Record<string, Parameters<View['word']>[0]>> = {
  status: 'st',
  transaction_status: 'gs',
  payment_type: 'pt',
  kind: 'kind',
};

/** Each cell of a row as the format writes it: the API's value in a CSV, words for codes in a spreadsheet. */
function cells<K extends string>(
  v: View,
  t: Translate<DownloadKey>,
  columns: readonly K[],
  row: Readonly<Record<K, Cell>>,
  sep: CsvSeparator,
): Cell[] {
  return columns.map((c) => {
    const value = row[c];
    if (sep === ',') return value;
    const prefix = WORDED[c];
    if (prefix !== undefined && typeof value === 'string' && value !== '') return v.word(prefix, value);
    if (typeof value === 'boolean') return t(value ? 'yes' : 'no');
    return value;
  });
}

/** The download form under the transaction list: the page's filters go with it, the days default to this month. */
export function downloadsForm(v: View, query: ListQuery, now: Date): Html {
  const t = translator(DOWNLOAD_MESSAGES, v.lang);
  const month = thisMonth(now, v.timeZone);
  const from = query.from && DAY.test(query.from) ? query.from : month.from;
  const to = query.to && DAY.test(query.to) ? query.to : month.to;
  const carried = (['q', 'mercant_id', 'status', 'payment_type', 'account'] as const).filter(
    (k) => (query[k] ?? '') !== '',
  );
  return html`<section class="card downloads" aria-labelledby="h-downloads"><h2 id="h-downloads">${t('title')}</h2>
<p class="muted">${t('help')}</p>
<form method="get" action="/console/transactions/export" class="filters">
${carried.map((k) => html`<input type="hidden" name="${k}" value="${query[k] ?? ''}">`)}<input type="hidden" name="lang" value="${v.lang}">
<label>${t('from')}<input type="date" name="from" value="${from}" required></label>
<label>${t('to')}<input type="date" name="to" value="${to}" required></label>
<label>${t('format')}<select name="sep"><option value=";"${v.lang === 'id' ? html` selected` : ''}>${t('sheet')}</option><option value=","${v.lang === 'id' ? '' : html` selected`}>${t('csv')}</option></select></label>
<button type="submit" data-download="transactions">${t('transactions')}</button>
<button type="submit" class="secondary" formaction="/console/reports/daily" data-download="daily">${t('daily')}</button>
</form></section>`;
}

const Sep = Type.Optional(Type.Union([Type.Literal(','), Type.Literal(';')]));

function days(v: View, from: string | undefined, to: string | undefined, now: Date): { from: string; to: string } {
  const month = thisMonth(now, v.timeZone);
  const f = from || month.from;
  const l = to || month.to;
  for (const [path, value] of [
    ['from', f],
    ['to', l],
  ] as const)
    if (!DAY.test(value))
      throw new AppError('VALIDATION_FAILED', `${path} must be a date YYYY-MM-DD.`, {
        errors: [{ path, message: 'must be a date YYYY-MM-DD' }],
      });
  return { from: f, to: l };
}

export const consoleDownloadRoutes: RoutePlugin<Deps<'clock' | 'config' | 'formKeySecret' | 'store'>> = async (
  app,
  services,
) => {
  const ctx = consoleContext(services);

  app.get(
    '/console/transactions/export',
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console download: the transaction list',
          "The console's transaction search (q, mercant_id, status, payment_type) for the transactions created from `from` to `to` (days in the console's time zone; default this month), newest first. `sep=,` (default): CSV with the API's column names and codes; `sep=;`: a spreadsheet with headers and codes (payment type, status, kind, yes/no) in words of the page's language.",
        ),
        querystring: Type.Object({
          q: OptionalStr(200),
          mercant_id: OptionalStr(200),
          status: OptionalStr(40),
          payment_type: OptionalStr(40),
          from: OptionalStr(20),
          to: OptionalStr(20),
          account: OptionalStr(32),
          sep: Sep,
          lang: LangQuery,
        }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const t = translator(DOWNLOAD_MESSAGES, v.lang);
      const { sep = ',', lang: _lang, ...query } = req.query;
      const range = days(v, query.from, query.to, services.clock.now());
      const { search, problems } = searchOf({ ...query, ...range }, v);
      if (problems.length > 0)
        throw new AppError('VALIDATION_FAILED', problems.join('; '), {
          errors: problems.map((p) => ({ path: 'query', message: p })),
        });
      const rows = eachSearchedTransaction(services, search, operatorActor(req));
      async function* lines() {
        yield CSV_BOM + csvLine(headers(t, TX_COLUMNS, sep), sep);
        for await (const tx of rows) {
          yield csvLine(cells(v, t, TX_COLUMNS, transactionView(tx), sep), sep);
        }
      }
      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="paylink-transactions-${range.from}-${range.to}.csv"`)
        .send(Readable.from(lines()));
    },
  );

  app.get(
    '/console/reports/daily',
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console download: the daily report',
          "GET /api/reports/daily as a file for the days from `from` to `to` (default this month) in the console's time zone. `sep=,` (default): CSV with the API's column names and codes; `sep=;`: a spreadsheet with headers and codes (payment type, status, kind, yes/no) in words of the page's language.",
        ),
        querystring: Type.Object({ from: OptionalStr(20), to: OptionalStr(20), sep: Sep, lang: LangQuery }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const t = translator(DOWNLOAD_MESSAGES, v.lang);
      const sep = req.query.sep ?? ',';
      const range = days(v, req.query.from, req.query.to, services.clock.now());
      const rows = await dailyReport(services, { ...range, timeZone: v.timeZone }, operatorActor(req));
      const lines = [
        CSV_BOM + csvLine(headers(t, DAILY_COLUMNS, sep), sep),
        ...rows.map((r) => csvLine(cells(v, t, DAILY_COLUMNS, r, sep), sep)),
      ];
      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="paylink-daily-${range.from}-${range.to}.csv"`)
        .send(Readable.from(lines));
    },
  );
};
