import { Type } from 'typebox';
import { operatorActor } from '../../plugins/actor.js';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { Count, CsvSeparatorParam, PaymentStatusSchema, countParam, instantParam } from '../../schemas/common.js';
import { Readable } from 'node:stream';
import { withExample } from '../../schemas/examples.js';
import { TransactionSchema, transactionView, type TransactionView } from './views.js';
import { eachTransaction, listTransactions } from '../../../domain/queries/listing.js';
import { CSV_BOM, CSV_CONTENT_TYPE, csvLine } from '../../csv.js';
import { problems } from '../../schemas/problems.js';
import { AccountIdSchema, severalAccounts } from '../../../domain/accounts/accounts.js';
import type { TransactionRecord } from '../../../model/payment.js';

/** The list's filters, shared by the list and its CSV export. */
const Filters = {
  account: Type.Optional(AccountIdSchema),
  status: Type.Optional(PaymentStatusSchema),
  mercant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  since: Type.Optional(
    Type.String({ format: 'date-time', maxLength: 40, description: 'Only transactions created at or after this time' }),
  ),
};

const ListQuery = Type.Object(
  {
    ...Filters,
    limit: Type.Optional(Count('1..1000, default 100')),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z0-9_-]+$' })),
  },
  { additionalProperties: false },
);

const ExportQuery = Type.Object(
  { ...Filters, format: Type.Literal('csv', { description: 'csv (the only format)' }), sep: CsvSeparatorParam },
  { additionalProperties: false },
);

const LIST_EXAMPLE = {
  items: [
    {
      order_id: 'INV/2026/0042:1',
      gateway_order_id: 'INV.2026.0042.1',
      mercant_id: 'INV/2026/0042',
      kind: 'payment_link',
      attempt: 1,
      nominal: 150000,
      paid_amount: 150000,
      original_amount: null,
      refunded_amount: 0,
      fee_amount: 1050,
      net_amount: 148950,
      amount_mismatch: false,
      status: 'paid' as const,
      transaction_status: 'settlement',
      fraud_status: 'accept',
      payment_type: 'qris',
      transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
      payment_url: 'https://app.midtrans.com/payment-links/pl-d8c4687194071ce6ba',
      expire_at: '2026-11-23T10:00:00+07:00',
      transaction_time: '2026-11-22T10:00:00+07:00',
      settlement_time: '2026-11-22T10:05:00+07:00',
      status_version: 1,
      created_at: '2026-11-22T10:00:00+07:00',
      updated_at: '2026-11-22T10:05:00+07:00',
    },
  ],
  next_cursor: 'eyJjIjoiMjAyNi0xMS0yMlQwMzowMDowMC4wMDBaIn0',
};

/** The export's columns: the list's fields, in its order (`account` only when there are several). */
const EXPORT_COLUMNS = (Object.keys(TransactionSchema.properties) as Array<keyof TransactionView | 'account'>).filter(
  (c): c is keyof TransactionView => c !== 'account',
);

/** A row of the list: the transaction, naming its account when the service has several. */
function rowView(t: TransactionRecord, several: boolean) {
  return several ? { account: t.account, ...transactionView(t) } : transactionView(t);
}

export const transactionRoutes: RoutePlugin<Deps<'store'>> = async (app, services) => {
  app.get(
    '/api/transactions',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Transactions, newest first',
        description:
          "Stored payments newest first, filtered by `account` (all accounts when absent; each row names its account when there are several), `status`, `mercant_id` and `since`, paged with `cursor`, with the money the gateway reported beside the order's amount (paid, original before a fee, refunded, and fee and net once a settlement report was imported). Reads only this service's records; it does not ask the gateway.",
        querystring: ListQuery,
        response: {
          200: withExample(
            Type.Object({ items: Type.Array(TransactionSchema), next_cursor: Type.Optional(Type.String()) }),
            LIST_EXAMPLE,
          ),
          ...problems(400),
        },
      },
    },
    async (req) => {
      const { account, status, mercant_id, since, cursor } = req.query;
      // Stored times are UTC ISO strings compared as text, so the filter must be one too.
      const sinceIso = instantParam('since', since)?.toISOString();
      const several = await severalAccounts(services);
      const page = await listTransactions(
        services,
        {
          account,
          status,
          mercantId: mercant_id,
          since: sinceIso,
          cursor,
          limit: countParam('limit', req.query.limit, 100, 1000),
        },
        operatorActor(req),
      );
      const items = page.items.map((t) => rowView(t, several));
      return page.nextCursor ? { items, next_cursor: page.nextCursor } : { items };
    },
  );

  app.get(
    '/api/transactions/export',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'The transaction list as a CSV file',
        description:
          "Every transaction the filters select (those of `GET /api/transactions`), newest first, one row each with the list's fields as columns. Spreadsheet-ready: UTF-8 with BOM, header row, RFC 4180 quoting, `,` or (`sep=;`) `;` between cells. No text cell can start a formula: a `=`, `+`, `-`, `@` (or tab, CR, fullwidth `＝＋－＠`) at its start or after a `,`, `;`, tab or line end in it gets a `'` in front; numbers stay numbers. Streamed, whatever the size.",
        querystring: ExportQuery,
        response: {
          200: Type.Unsafe<unknown>({
            description: 'text/csv',
            content: { 'text/csv': { schema: { type: 'string' } } },
          }),
          ...problems(400),
        },
      },
    },
    async (req, reply) => {
      const { account, status, mercant_id, since, sep = ',' } = req.query;
      const sinceIso = instantParam('since', since)?.toISOString();
      const several = await severalAccounts(services);
      const rows = eachTransaction(
        services,
        { account, status, mercantId: mercant_id, since: sinceIso },
        operatorActor(req),
      );
      async function* lines() {
        yield CSV_BOM + csvLine(several ? ['account', ...EXPORT_COLUMNS] : EXPORT_COLUMNS, sep);
        for await (const t of rows) {
          const v = transactionView(t);
          const cells = EXPORT_COLUMNS.map((c) => v[c]);
          yield csvLine(several ? [t.account, ...cells] : cells, sep);
        }
      }
      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', 'attachment; filename="paylink-transactions.csv"')
        .send(Readable.from(lines()));
    },
  );
};
