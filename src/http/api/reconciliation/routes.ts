import { Stream, type Readable } from 'node:stream';
import { Type } from 'typebox';
import { TAGS, type App, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { AppError } from '../../../platform/errors.js';
import {
  RECONCILIATION_RESULTS,
  RECONCILIATION_SOURCES,
  type ReconciliationSource,
} from '../../../model/reconciliation.js';
import { previousJakartaDay, reconcileHistoryDay } from '../../../domain/reconciliation/history.js';
import { Count, Nullable, NullableInt, countParam } from '../../schemas/common.js';
import { withExample } from '../../schemas/examples.js';
import { requireAccount, severalAccounts } from '../../../domain/accounts/accounts.js';
import { inAccount } from '../../../domain/accounts/scope.js';
import { ACCOUNT_ID_PATTERN, DEFAULT_ACCOUNT } from '../../../model/account.js';
import { IMPORT_EXAMPLE, importView, rowView } from './views.js';
import { REPORT_FIELDS } from '../../../domain/reconciliation/columns.js';
import { MAX_REPORT_BYTES, importGatewayReport } from '../../../domain/reconciliation/import.js';
import { SEPARATORS, type SeparatorName } from '../../../domain/reconciliation/reader.js';
import { getReconciliation, listReconciliations } from '../../../domain/reconciliation/queries.js';
import { problems } from '../../schemas/problems.js';
import { operatorActor } from '../../plugins/actor.js';

const Counts = {
  rows: Type.Integer(),
  matched: Type.Integer(),
  missing_here: Type.Integer({ description: 'In the report, unknown to paylink' }),
  missing_at_gateway: Type.Integer({ description: 'Paid here, absent from a report that covers its day' }),
  amount_mismatch: Type.Integer(),
  status_mismatch: Type.Integer(),
  transaction_mismatch: Type.Integer({ description: "The row's transaction id is paylink's for another payment" }),
  chargeback: Type.Integer({
    description:
      "Refunds of type chargeback in the withdrawal report's Refund Type column: the customer's bank took the money back; counted apart from refunds and mismatches",
  }),
};

const ImportSchema = Type.Object({
  account: Type.Optional(
    Type.String({ description: 'The account whose report it is; present when the service has more than one' }),
  ),
  id: Type.String(),
  ...Counts,
  covers_from: Nullable(Type.String({ description: 'First day (Jakarta) the report covers' })),
  covers_to: Nullable(Type.String({ description: 'Last day (Jakarta) the report covers' })),
  source: Type.Unsafe<ReconciliationSource>({
    type: 'string',
    enum: [...RECONCILIATION_SOURCES],
    description:
      "`file`: a report uploaded; `history_api`: one day of the gateway's transaction history read through BI-SNAP (its `file_sha256` then stands for the account and day)",
  }),
  file_sha256: Type.String(),
  created_by: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  finished_at: Nullable(Type.String({ format: 'date-time' })),
});

/** An import's answer, the first time (201) and for the same file again (200). */
const Imported = withExample(ImportSchema, IMPORT_EXAMPLE);

const RowSchema = Type.Object({
  id: Type.Integer(),
  line: NullableInt,
  result: Type.Unsafe<string>({ type: 'string', enum: [...RECONCILIATION_RESULTS] }),
  gateway_order_id: Type.String(),
  order_id: Nullable(Type.String()),
  report_status: Nullable(Type.String()),
  report_amount: NullableInt,
  fee_amount: NullableInt,
  net_amount: NullableInt,
  paylink_status: Nullable(Type.String()),
  paylink_amount: NullableInt,
  detail: Nullable(Type.String()),
});

const IMPORT_ROWS_EXAMPLE = {
  ...IMPORT_EXAMPLE,
  items: [
    {
      id: 7,
      line: 8,
      result: 'amount_mismatch',
      gateway_order_id: 'INV.2026.0042.1',
      order_id: 'INV/2026/0042:1',
      report_status: 'settlement',
      report_amount: 150500,
      fee_amount: 1050,
      net_amount: 149450,
      paylink_status: 'paid',
      paylink_amount: 150000,
      detail: 'amount: the report says 150500, paylink 150000',
    },
  ],
};

const ImportQuery = Type.Object(
  {
    account: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        pattern: ACCOUNT_ID_PATTERN,
        description:
          "The account (one MID) whose report it is; default `default`. Its rows are matched with that account's payments only",
      }),
    ),
    columns: Type.Optional(
      Type.String({
        maxLength: 2000,
        description: `For other layouts: \`field:Header,…\` or a JSON object; fields ${REPORT_FIELDS.join(', ')}`,
      }),
    ),
    separator: Type.Optional(
      Type.Unsafe<SeparatorName>({
        type: 'string',
        enum: Object.keys(SEPARATORS),
        description: "The file's separator, for every line; default: the one its header line uses",
      }),
    ),
    from: Type.Optional(
      Type.String({
        maxLength: 10,
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'First day (Jakarta) the report covers; with `to`. Default: the earliest date in the file',
      }),
    ),
    to: Type.Optional(
      Type.String({
        maxLength: 10,
        pattern: '^\\d{4}-\\d{2}-\\d{2}$',
        description: 'Last day (Jakarta) the report covers; with `from`',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The report as it streams in: only a CSV body is one (a JSON body was parsed into something else). */
function reportBody(body: unknown): Readable {
  if (body === undefined)
    throw new AppError('VALIDATION_FAILED', 'The report is empty: send the CSV file as the body.', {
      errors: [{ path: 'body', message: 'no file' }],
    });
  if (!(body instanceof Stream))
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The report is a CSV file: send it as text/csv.');
  return body as Readable;
}

export const reconciliationRoutes: RoutePlugin<
  Deps<'clock' | 'logger' | 'runtimeConfig' | 'store' | 'histories'>
> = async (app, services) => {
  await app.register(async (scope) => {
    const s = scope as App;
    // The report streams through: it is read row by row, never held whole.
    s.addContentTypeParser(['text/csv', 'application/csv', 'text/plain'], (_req, payload, done) => done(null, payload));
    s.post(
      '/api/reconciliation/imports',
      {
        config: { auth: 'op' },
        bodyLimit: MAX_REPORT_BYTES,
        schema: {
          tags: [TAGS.operations],
          summary: "Import a report exported from the gateway's dashboard (CSV)",
          description:
            'Body: the CSV file as exported (`text/csv`), up to 64 MB, UTF-8 (or UTF-16 with a byte-order mark), one separator for every line (comma, semicolon or tab: the one its header line uses, or `separator`). ' +
            'Columns are found by their header (Order ID, Transaction ID, Transaction Status, Amount, Fee, Settlement Time, …); name them with `columns` for other layouts. ' +
            "Every row is kept with its result: `matched` (only these write their fee and net onto the payment), `missing_here`, `amount_mismatch`, `status_mismatch`, `transaction_mismatch` (its transaction id is another payment's), `chargeback` (a refund of type chargeback in the withdrawal report's Refund Type column); " +
            'payments paid here on the days the report covers that it does not list are `missing_at_gateway`. 201 with the summary; the same file again is 200 with the first import. ' +
            'The whole file is checked before anything is written, then the import and the fees are written in one transaction: a malformed file (a cell that cannot be read, a NUL, an impossible date or one outside two years back to tomorrow, a fee above the amount, a net other than amount − fee) is a 400 naming the line and column, and nothing of it is kept.',
          querystring: ImportQuery,
          consumes: ['text/csv'],
          response: { 200: Imported, 201: Imported, ...problems(400, 403, 404, 409, 413, 415) },
        },
      },
      async (req, reply) => {
        const body = reportBody(req.body);
        const account = await requireAccount(services, req.query.account ?? DEFAULT_ACCOUNT, operatorActor(req));
        const several = await severalAccounts(services);
        const out = await importGatewayReport(inAccount(services, account.id), {
          body,
          columns: req.query.columns,
          separator: req.query.separator,
          from: req.query.from,
          to: req.query.to,
          actor: operatorActor(req),
        });
        return reply.code(out.created ? 201 : 200).send(importView(out.import, several));
      },
    );
  });

  app.post(
    '/api/reconciliation/history-runs',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: "Reconcile one day from the gateway's transaction history (BI-SNAP)",
        description:
          "Reads the account's transaction history for one past day (Jakarta) through BI-SNAP, page by page, and reconciles it exactly as an imported report of that day: the same results, the fee and net of matched rows written in one transaction, visible among the imports with `source` `history_api`. " +
          'A day is reconciled once per account: 201 with the new import, 200 with the first one when the day was reconciled before (the gateway is not asked again). ' +
          'Finance or admin. A refusal or failure of the gateway writes nothing (502, 503 or 504); an account without BI-SNAP credentials is a 409.',
        body: Type.Object(
          {
            account: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 32,
                pattern: ACCOUNT_ID_PATTERN,
                description: 'Default `default`',
              }),
            ),
            day: Type.Optional(
              Type.String({
                maxLength: 10,
                pattern: '^\\d{4}-\\d{2}-\\d{2}$',
                description: 'The Jakarta day (YYYY-MM-DD), over already; default yesterday',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Imported, 201: Imported, ...problems(400, 403, 404, 409, 502, 503, 504) },
      },
    },
    async (req, reply) => {
      const actor = operatorActor(req);
      const account = await requireAccount(services, req.body.account ?? DEFAULT_ACCOUNT, actor);
      const out = await reconcileHistoryDay(inAccount(services, account.id), {
        day: req.body.day ?? previousJakartaDay(services.clock.now()),
        by: actor,
      });
      return reply.code(out.created ? 201 : 200).send(importView(out.import, await severalAccounts(services)));
    },
  );

  app.get(
    '/api/reconciliation/imports',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Imports of gateway reports, newest first',
        description:
          'The finished imports of gateway reports, newest first, each with its summary; page with `cursor`. A file imported twice appears once.',
        querystring: Type.Object(
          {
            limit: Type.Optional(Count('1..200, default 50', 3)),
            cursor: Type.Optional(Type.String({ maxLength: 300 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: withExample(
            Type.Object({ items: Type.Array(ImportSchema), next_cursor: Type.Optional(Type.String()) }),
            { items: [IMPORT_EXAMPLE] },
          ),
          ...problems(400),
        },
      },
    },
    async (req) => {
      const several = await severalAccounts(services);
      const page = await listReconciliations(
        services,
        {
          limit: countParam('limit', req.query.limit, 50, 200),
          cursor: req.query.cursor,
        },
        operatorActor(req),
      );
      return page.nextCursor
        ? { items: page.items.map((i) => importView(i, several)), next_cursor: page.nextCursor }
        : { items: page.items.map((i) => importView(i, several)) };
    },
  );

  app.get(
    '/api/reconciliation/imports/:id',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'One import with its rows and their results',
        description:
          'The import with its rows in the order of the report (`missing_at_gateway` rows last), each with its `result` and, where the report and paylink differ, a `detail` in words. Filter by `result`; page with `after` (the last row id).',
        params: Type.Object(
          { id: Type.String({ maxLength: 36, pattern: '^[0-9a-f-]{36}$' }) },
          { additionalProperties: false },
        ),
        querystring: Type.Object(
          {
            result: Type.Optional(
              Type.Unsafe<(typeof RECONCILIATION_RESULTS)[number]>({
                type: 'string',
                enum: [...RECONCILIATION_RESULTS],
              }),
            ),
            limit: Type.Optional(Count('1..5000, default 500')),
            after: Type.Optional(
              Type.String({
                maxLength: 15,
                pattern: '^[0-9]{1,15}$',
                description: 'The last row id of the previous page',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: withExample(
            Type.Object({
              ...ImportSchema.properties,
              items: Type.Array(RowSchema),
              next_after: Type.Optional(Type.String()),
            }),
            IMPORT_ROWS_EXAMPLE,
          ),
          ...problems(400, 404),
        },
      },
    },
    async (req) => {
      const limit = countParam('limit', req.query.limit, 500, 5000);
      const { imp, rows } = await getReconciliation(
        services,
        req.params.id,
        {
          result: req.query.result,
          limit,
          afterId: req.query.after === undefined ? undefined : Number(req.query.after),
        },
        operatorActor(req),
      );
      const last = rows.at(-1);
      return {
        ...importView(imp, await severalAccounts(services)),
        items: rows.map(rowView),
        ...(rows.length === limit && last ? { next_after: String(last.id) } : {}),
      };
    },
  );
};
