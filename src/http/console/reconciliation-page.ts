/**
 * The console's Reconciliation page: upload a report exported from the gateway's dashboard (a plain
 * multipart form with its CSRF token), the imports with their counts, one import's rows by result,
 * and its exceptions as a CSV file. The file streams into the import as it arrives: it is never
 * held whole, on disk or in memory.
 */
import { Readable } from 'node:stream';
import multipart, { type Multipart, type MultipartFile } from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App, RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import type { ReconciliationRow } from '../../model/reconciliation.js';
import { AppError } from '../../platform/errors.js';
import {
  RECONCILIATION_RESULTS,
  type ReconciliationImport,
  type ReconciliationResult,
} from '../../model/reconciliation.js';
import { MAX_REPORT_BYTES, importGatewayReport } from '../../domain/reconciliation/import.js';
import { previousJakartaDay, reconcileHistoryDay } from '../../domain/reconciliation/history.js';
import { separatorNamed } from '../../domain/reconciliation/reader.js';
import { getReconciliation, listReconciliations } from '../../domain/reconciliation/queries.js';
import { translator, type Translate } from '../../platform/i18n.js';
import { MONEY_MESSAGES, type MoneyKey } from './i18n/money.js';
import { CsvSeparatorParam, OptionalStr } from '../schemas/common.js';
import { CSV_BOM, CSV_CONTENT_TYPE, csvLine, type CsvSeparator } from '../csv.js';
import { rowView } from '../api/reconciliation/views.js';
import { operatorActor } from '../plugins/actor.js';
import type { Actor } from '../../domain/audit.js';
import { html, rupiah, type Html } from './html.js';
import { EMPTY, type View } from './view.js';
import { statusBadge } from './layout.js';
import type { Alert } from './layout.js';
import { txLink } from './transactions.js';
import { consoleDoc, errorAlert } from './context.js';
import { consoleContext } from './scope.js';

type T = Translate<MoneyKey>;

const BASE = '/console/reconciliation';
const LIST_SIZE = 20;
const ROWS_SIZE = 200;
const CSV_BATCH = 1000;
const EXCEPTIONS = RECONCILIATION_RESULTS.filter((r) => r !== 'matched');
const FIELD_MAX = { _csrf: 200, columns: 2000, separator: 10, from: 10, to: 10 } as const;
type UploadField = keyof typeof FIELD_MAX;

const ImportId = Type.String({ minLength: 36, maxLength: 36, pattern: '^[0-9a-f-]{36}$' });
const ResultParam = Type.Optional(
  Type.Union([Type.Literal(''), ...RECONCILIATION_RESULTS.map((r) => Type.Literal(r))]),
);

const resultLabel = (t: T, r: ReconciliationResult) => t(`r_${r}`);

function resultBadge(t: T, r: ReconciliationResult): Html {
  // The badge colours follow the status words the stylesheet knows: matched reads as settled, the rest as failed.
  return html`<span class="badge ${r === 'matched' ? 's-paid' : 's-failed'}" data-result="${r}">${resultLabel(t, r)}</span>`;
}

function sourceLabel(t: T, imp: ReconciliationImport): string {
  return imp.source === 'history_api' ? t('sourceHistory') : t('sourceFile');
}

function covers(imp: ReconciliationImport): string {
  return imp.coversFrom === null
    ? '—'
    : imp.coversFrom === imp.coversTo
      ? imp.coversFrom
      : `${imp.coversFrom} – ${imp.coversTo ?? ''}`;
}

/** Reconcile one past day from the gateway's transaction history (BI-SNAP); yesterday by default. */
function historyForm(t: T, token: string, yesterday: string): Html {
  return html`<form method="post" action="${BASE}/history" class="card" aria-labelledby="h-history">
<h2 id="h-history">${t('historyTitle')}</h2>
<p class="muted">${t('historyHelp')}</p>
<input type="hidden" name="_csrf" value="${token}">
<label>${t('historyDay')}<input type="date" name="day" value="${yesterday}" max="${yesterday}" required></label>
<button type="submit">${t('historyRun')}</button>
</form>`;
}

function uploadForm(t: T, token: string): Html {
  return html`<form method="post" action="${BASE}" enctype="multipart/form-data" class="card upload" aria-labelledby="h-upload">
<h2 id="h-upload">${t('uploadTitle')}</h2>
<p class="muted">${t('uploadHelp')}</p>
<input type="hidden" name="_csrf" value="${token}">
<fieldset>
<label>${t('columns')}<input name="columns" maxlength="${FIELD_MAX.columns}" autocomplete="off" placeholder="order_id:Kode,status:Status,amount:Jumlah"></label>
<label>${t('separator')}<select name="separator"><option value="">${t('separatorAuto')}</option><option value="comma">${t('separatorComma')}</option><option value="semicolon">${t('separatorSemicolon')}</option><option value="tab">${t('separatorTab')}</option></select></label>
<label>${t('from')}<input type="date" name="from"></label>
<label>${t('to')}<input type="date" name="to"></label>
<label>${t('file')}<input type="file" name="file" accept=".csv,text/csv" required></label>
</fieldset>
<button type="submit">${t('import')}</button>
</form>`;
}

function countCells(imp: ReconciliationImport): Html {
  return html`<td class="num" data-count="rows">${imp.rows}</td>${RECONCILIATION_RESULTS.map((r) => html`<td class="num" data-count="${r}">${imp[r]}</td>`)}`;
}

function countHeads(t: T): Html {
  return html`<th scope="col" class="num">${t('rows')}</th>${RECONCILIATION_RESULTS.map((r) => html`<th scope="col" class="num">${resultLabel(t, r)}</th>`)}`;
}

async function listBody(
  services: Deps<'clock' | 'store'>,
  v: View,
  t: T,
  token: string,
  cursor: string | undefined,
  mayImport: boolean,
  actor: Actor,
): Promise<Html> {
  const page = await listReconciliations(services, { limit: LIST_SIZE, cursor }, actor);
  const yesterday = previousJakartaDay(services.clock.now());
  return html`${mayImport ? uploadForm(t, token) : ''}${mayImport ? historyForm(t, token, yesterday) : ''}
<h2 id="h-imports">${t('imports')}</h2>
${
  page.items.length === 0
    ? html`<p class="muted">${t('noImports')}</p>`
    : html`<div class="table-wrap"><table aria-labelledby="h-imports"><thead><tr><th scope="col">${t('importedAt')}</th><th scope="col">${t('importedBy')}</th><th scope="col">${t('source')}</th><th scope="col">${t('covers')}</th>${countHeads(t)}</tr></thead>
<tbody>${page.items.map((imp) => html`<tr data-import="${imp.id}"><td><a href="${BASE}/${imp.id}">${v.when(imp.createdAt)}</a></td><td>${imp.createdBy}</td><td>${sourceLabel(t, imp)}</td><td>${covers(imp)}</td>${countCells(imp)}</tr>`)}</tbody></table></div>`
}
${page.nextCursor ? html`<p class="pager"><a href="${BASE}?cursor=${encodeURIComponent(page.nextCursor)}">${t('older')}</a></p>` : ''}`;
}

async function importBody(
  services: Deps<'store'>,
  v: View,
  t: T,
  id: string,
  result: ReconciliationResult | undefined,
  after: number | undefined,
  actor: Actor,
): Promise<{ imp: ReconciliationImport; body: Html }> {
  const { imp, rows } = await getReconciliation(services, id, { result, limit: ROWS_SIZE, afterId: after }, actor);
  const last = rows.at(-1);
  const self = `${BASE}/${imp.id}`;
  const body = html`<p><a href="${BASE}">${t('backToList')}</a></p>
<section class="card" aria-labelledby="h-summary"><h2 id="h-summary">${t('summary')}</h2>
<dl class="kv"><dt>${t('importedBy')}</dt><dd>${imp.createdBy}</dd><dt>${t('source')}</dt><dd>${sourceLabel(t, imp)}</dd><dt>${t('covers')}</dt><dd>${covers(imp)}</dd></dl>
<div class="table-wrap"><table><thead><tr>${countHeads(t)}</tr></thead><tbody><tr>${countCells(imp)}</tr></tbody></table></div>
<p><a href="${self}/exceptions.csv" download>${t('downloadExceptions')}</a> · <a href="${self}/exceptions.csv?sep=%3B" download>${t('downloadExceptionsSemicolon')}</a></p>
</section>
<form method="get" action="${self}" class="filters">
<label>${t('result')}<select name="result"><option value="">${t('all')}</option>${RECONCILIATION_RESULTS.map((r) => html`<option value="${r}"${r === result ? html` selected` : ''}>${resultLabel(t, r)} (${imp[r]})</option>`)}</select></label>
<button type="submit">${t('filter')}</button>
</form>
${
  rows.length === 0
    ? html`<p class="muted">${t('noRows')}</p>`
    : html`<div class="table-wrap"><table><thead><tr><th scope="col" class="num">${t('line')}</th><th scope="col">${t('result')}</th><th scope="col">${t('gatewayOrderId')}</th><th scope="col">${t('orderId')}</th><th scope="col">${t('reportStatus')}</th><th scope="col" class="num">${t('reportAmount')}</th><th scope="col">${t('paylinkStatus')}</th><th scope="col" class="num">${t('paylinkAmount')}</th><th scope="col" class="num">${t('fee')}</th><th scope="col" class="num">${t('net')}</th><th scope="col">${t('detail')}</th></tr></thead>
<tbody>${rows.map(
        (r) =>
          html`<tr data-row="${r.id}"><td class="num">${r.line ?? '—'}</td><td>${resultBadge(t, r.result)}</td><td class="mono">${r.gatewayOrderId}</td><td class="mono">${r.orderId ? html`<a href="${txLink(r.orderId)}">${r.orderId}</a>` : '—'}</td><td data-report-status="${r.reportStatus ?? ''}">${r.reportStatus ? v.word('gs', r.reportStatus) : EMPTY}</td><td class="num">${rupiah(r.reportAmount)}</td><td>${r.paylinkStatus ? statusBadge(v, r.paylinkStatus) : EMPTY}</td><td class="num">${rupiah(r.paylinkAmount)}</td><td class="num">${rupiah(r.feeAmount)}</td><td class="num">${rupiah(r.netAmount)}</td><td>${differs(t, v, r)}</td></tr>`,
      )}</tbody></table></div>`
}
${rows.length === ROWS_SIZE && last ? html`<p class="pager"><a href="${self}?${new URLSearchParams({ ...(result ? { result } : {}), after: String(last.id) }).toString()}">${t('next')}</a></p>` : ''}`;
  return { imp, body };
}

/** Every row of an import but the matched ones, grouped by result, as spreadsheets read CSV. */
async function* exceptionsCsv(
  services: Deps<'store'>,
  id: string,
  sep: CsvSeparator,
  actor: Actor,
): AsyncGenerator<string> {
  const header = Object.keys(
    rowView({
      id: 0,
      importId: id,
      line: null,
      result: 'matched',
      gatewayOrderId: '',
      orderId: null,
      transactionRef: null,
      reportStatus: null,
      reportAmount: null,
      feeAmount: null,
      netAmount: null,
      paylinkStatus: null,
      paylinkAmount: null,
      detail: null,
    }),
  );
  yield CSV_BOM + csvLine(header, sep);
  for (const result of EXCEPTIONS) {
    let afterId: number | undefined;
    for (;;) {
      const { rows } = await getReconciliation(services, id, { result, limit: CSV_BATCH, afterId }, actor);
      if (rows.length > 0) yield rows.map((r) => csvLine(Object.values(rowView(r)), sep)).join('');
      if (rows.length < CSV_BATCH) break;
      afterId = rows.at(-1)?.id;
    }
  }
}

interface Upload {
  file: MultipartFile | undefined;
  fields: Partial<Record<UploadField, string>>;
}

const uploads = new WeakMap<FastifyRequest, Upload>();

/** A form field's value as text. */
function fieldValue(part: Multipart, name: UploadField): string {
  if (part.type !== 'field' || typeof part.value !== 'string' || part.valueTruncated) {
    throw new AppError('VALIDATION_FAILED', `The form's ${name} field is not a text value.`, {
      errors: [{ path: name, message: 'must be one text value' }],
    });
  }
  // No NUL reaches the import (PostgreSQL text cannot hold one): refused here as everywhere else.
  if (part.value.includes('\u0000'))
    throw new AppError('VALIDATION_FAILED', `The form's ${name} field contains a NUL character (U+0000).`, {
      errors: [{ path: name, message: 'must not contain NUL (U+0000)' }],
    });
  if (part.value.length > FIELD_MAX[name])
    throw new AppError('VALIDATION_FAILED', `${name} is too long.`, {
      errors: [{ path: name, message: `at most ${FIELD_MAX[name]} characters` }],
    });
  return part.value;
}

const isUploadField = (name: string): name is UploadField => Object.hasOwn(FIELD_MAX, name);

/** What differs, in the page's words: an Indonesian page says it from the row's figures; an English one keeps the import's sentence. */
function differs(t: Translate<MoneyKey>, v: View, r: ReconciliationRow): string {
  if (v.lang === 'en') return r.detail ?? '';
  switch (r.result) {
    case 'amount_mismatch':
      return t('d_amount', { report: rupiah(r.reportAmount), paylink: rupiah(r.paylinkAmount) });
    case 'status_mismatch':
      return t('d_status', {
        report: r.reportStatus ? v.word('gs', r.reportStatus) : EMPTY,
        paylink: r.paylinkStatus ? v.word('st', r.paylinkStatus) : EMPTY,
      });
    case 'missing_here':
      return t('d_missing_here');
    case 'missing_at_gateway':
      return t('d_missing_at_gateway');
    case 'transaction_mismatch':
      return t('d_transaction');
    case 'chargeback':
      return t('d_chargeback', { paylink: r.paylinkStatus ? v.word('st', r.paylinkStatus) : EMPTY });
    default:
      return '';
  }
}

const unreadable = (detail: string) =>
  new AppError('VALIDATION_FAILED', `The upload is not a complete form: ${detail}. Send the form again.`, {
    errors: [{ path: 'body', message: detail }],
  });

/** An error of the form's parser (a plain error, or one with a 5xx status) is the sender's: a 400. */
function formProblem(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const status = (err as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return err;
  return unreadable(err instanceof Error ? err.message.slice(0, 200) : 'unreadable multipart data');
}

/**
 * Reads the form up to its file (a browser sends the fields in the form's order, the file last),
 * so the CSRF token is checked before a byte of the report is read. Fields of other names are
 * ignored; a field sent twice is refused.
 */
async function readUploadFields(req: FastifyRequest): Promise<void> {
  const upload: Upload = { file: undefined, fields: {} };
  uploads.set(req, upload);
  try {
    const parts = req.parts({
      limits: { fileSize: MAX_REPORT_BYTES + 1, files: 1, fields: 8, parts: 10, fieldSize: 4096 },
    });
    for (let next = await parts.next(); !next.done; next = await parts.next()) {
      const part = next.value;
      if (part.type === 'file') {
        upload.file = part;
        break;
      }
      if (!isUploadField(part.fieldname)) continue;
      if (upload.fields[part.fieldname] !== undefined)
        throw new AppError('VALIDATION_FAILED', `The form's ${part.fieldname} field is sent twice.`, {
          errors: [{ path: part.fieldname, message: 'sent twice' }],
        });
      upload.fields[part.fieldname] = fieldValue(part, part.fieldname);
    }
  } catch (err) {
    throw formProblem(err);
  }
  req.body = { _csrf: upload.fields._csrf };
}

/**
 * The file's bytes as the import reads them. Read through its iterator, a part that failed before
 * the import began (the form cut short) fails the import instead of leaving it waiting for more.
 */
function fileBody(file: MultipartFile): Readable {
  return Readable.from(
    (async function* () {
      try {
        for await (const chunk of file.file) yield chunk as Buffer;
      } catch (err) {
        throw formProblem(err);
      }
      if (file.file.truncated)
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The report exceeds ${MAX_REPORT_BYTES / 1024 / 1024} MB; export fewer days at a time.`,
        );
    })(),
    { objectMode: false },
  );
}

/**
 * Whatever is left of the file is read and dropped, so the request ends; when it has not ended
 * yet the connection is closed after the answer rather than left behind an unread body.
 */
function drainUpload(req: FastifyRequest, reply: FastifyReply): void {
  const file = uploads.get(req)?.file?.file;
  if (file && !file.destroyed && !file.readableEnded) file.resume();
  if (!req.raw.complete) void reply.header('connection', 'close');
}

export const consoleReconciliationRoutes: RoutePlugin<
  Deps<'clock' | 'config' | 'formKeySecret' | 'histories' | 'logger' | 'runtimeConfig' | 'store'>
> = async (app, services) => {
  const ctx = consoleContext(services);
  const render = async (
    req: FastifyRequest,
    reply: FastifyReply,
    o: { alert?: Alert; status?: number; cursor?: string },
  ) => {
    const v = ctx.view(req, reply);
    const t = translator(MONEY_MESSAGES, v.lang);
    return ctx.render(reply, req, {
      title: t('reconciliation'),
      section: 'reconciliation',
      status: o.status,
      alert: o.alert,
      body: await listBody(
        services,
        v,
        t,
        ctx.csrfToken(req, reply),
        o.cursor,
        ctx.may(req, 'finance'),
        operatorActor(req),
      ),
    });
  };

  app.get(
    BASE,
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console: reconciliation',
          "Upload a report exported from the gateway's dashboard; the imports with their counts by result.",
        ),
        querystring: Type.Object({ cursor: OptionalStr(300) }),
      },
    },
    async (req, reply) => render(req, reply, { cursor: req.query.cursor }),
  );

  await app.register(async (scope) => {
    const s = scope as App;
    await s.register(multipart, { throwFileSizeLimit: true });
    s.addHook('onSend', async (req, reply, payload) => {
      drainUpload(req, reply);
      return payload;
    });
    s.post(
      BASE,
      {
        config: { auth: 'op' },
        bodyLimit: MAX_REPORT_BYTES + 1024 * 1024,
        preHandler: [readUploadFields, s.csrfProtection],
        schema: consoleDoc(
          'Console form: import a gateway report',
          "multipart/form-data: `_csrf` (the form's token), optional `columns`, `separator` (comma, semicolon or tab), `from`, `to` (YYYY-MM-DD), then `file` (the CSV, up to 64 MB). Answers 303 to the import; a file that cannot be read answers 400 with the page naming its line and column.",
        ),
      },
      async (req, reply) => {
        const upload = uploads.get(req);
        try {
          if (!upload?.file)
            throw new AppError('VALIDATION_FAILED', 'Choose the report file to import.', {
              errors: [{ path: 'file', message: 'no file' }],
            });
          const { columns, separator, from, to } = upload.fields;
          const out = await importGatewayReport(services, {
            body: fileBody(upload.file),
            columns: columns === '' ? undefined : columns,
            separator: separatorNamed(separator),
            from: from === '' ? undefined : from,
            to: to === '' ? undefined : to,
            actor: operatorActor(req),
          });
          return await reply.redirect(`${BASE}/${out.import.id}?done=${out.created ? 'imported' : 'again'}`, 303);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          // The same page with what went wrong on top, so the operator can correct the file or the fields and send again.
          return render(req, reply, { status: err.status, alert: errorAlert(ctx.view(req, reply), err, req.id) });
        }
      },
    );
  });

  app.post(
    `${BASE}/history`,
    {
      config: { auth: 'op' },
      preHandler: app.csrfProtection,
      schema: {
        ...consoleDoc(
          "Console form: reconcile a day from the gateway's history",
          'As POST /api/reconciliation/history-runs: `_csrf` and `day` (YYYY-MM-DD, a past Jakarta day). Answers 303 to the import; a refusal shows the page with what went wrong.',
        ),
        body: Type.Object({
          _csrf: Type.String({ maxLength: 512 }),
          day: Type.String({ maxLength: 10 }),
        }),
      },
    },
    async (req, reply) => {
      try {
        const out = await reconcileHistoryDay(services, { day: req.body.day, by: operatorActor(req) });
        return await reply.redirect(`${BASE}/${out.import.id}?done=${out.created ? 'imported' : 'again'}`, 303);
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        return render(req, reply, { status: err.status, alert: errorAlert(ctx.view(req, reply), err, req.id) });
      }
    },
  );

  app.get(
    `${BASE}/:id`,
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console: one reconciliation import',
          'Its counts by result and its rows, filtered by result, 200 at a time.',
        ),
        params: Type.Object({ id: ImportId }),
        querystring: Type.Object({
          result: ResultParam,
          after: Type.Optional(Type.String({ maxLength: 15, pattern: '^[0-9]{1,15}$' })),
          done: OptionalStr(20),
        }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const t = translator(MONEY_MESSAGES, v.lang);
      const result = req.query.result === '' ? undefined : req.query.result;
      const { imp, body } = await importBody(
        services,
        v,
        t,
        req.params.id,
        result,
        req.query.after === undefined ? undefined : Number(req.query.after),
        operatorActor(req),
      );
      const done =
        req.query.done === 'imported' ? t('imported') : req.query.done === 'again' ? t('importedBefore') : undefined;
      return ctx.render(reply, req, {
        title: t('importTitle', { when: v.when(imp.createdAt) }),
        section: 'reconciliation',
        body,
        alert: done ? { kind: 'ok', text: done } : undefined,
      });
    },
  );

  app.get(
    `${BASE}/:id/exceptions.csv`,
    {
      config: { auth: 'op' },
      schema: {
        ...consoleDoc(
          'Console: the exceptions of a reconciliation import (CSV)',
          'Every row whose result is not `matched`, grouped by result, `,` or (`sep=;`) `;` between cells; a cell that a spreadsheet would run as a formula is written as text.',
        ),
        produces: ['text/csv'],
        params: Type.Object({ id: ImportId }),
        querystring: Type.Object({ sep: CsvSeparatorParam }),
        response: {
          200: Type.Unsafe<unknown>({
            description: 'text/csv',
            content: { 'text/csv': { schema: { type: 'string' } } },
          }),
        },
      },
    },
    async (req, reply) => {
      // Unknown or unfinished: a 404 page before any byte of the file is sent.
      await getReconciliation(services, req.params.id, { limit: 1 }, operatorActor(req));
      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="reconciliation-${req.params.id}-exceptions.csv"`)
        .send(Readable.from(exceptionsCsv(services, req.params.id, req.query.sep ?? ',', operatorActor(req))));
    },
  );
};
