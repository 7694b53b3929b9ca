import { AccountIdSchema } from '../../../domain/accounts/accounts.js';
import { operatorActor } from '../../plugins/actor.js';
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { CsvSeparatorParam } from '../../schemas/common.js';
import {
  DEFAULT_REPORT_TIME_ZONE,
  MAX_REPORT_DAYS,
  dailyReport,
  type DailyRow,
} from '../../../domain/queries/daily-report.js';
import { CSV_BOM, CSV_CONTENT_TYPE, csvLine } from '../../csv.js';
import { problems } from '../../schemas/problems.js';

const DAILY_COLUMNS = [
  'date',
  'payment_type',
  'paid_count',
  'paid_amount',
  'refunded_amount',
  'net_amount',
  'fee_amount',
] as const satisfies readonly (keyof DailyRow)[];

const DailyRowSchema = Type.Object({
  date: Type.String({ description: 'YYYY-MM-DD in the time zone asked for' }),
  payment_type: Type.String(),
  paid_count: Type.Integer(),
  paid_amount: Type.Integer(),
  refunded_amount: Type.Integer(),
  net_amount: Type.Integer({ description: 'paid − refunded − the fees known' }),
  fee_amount: Type.Union([Type.Integer(), Type.Null()], {
    description: 'From imported gateway reports; null (empty in CSV) when none of the payments has one',
  }),
});

const DAILY_EXAMPLE = {
  items: [
    {
      date: '2026-11-20',
      payment_type: 'qris',
      paid_count: 2,
      paid_amount: 150000,
      refunded_amount: 20000,
      net_amount: 128950,
      fee_amount: 1050,
    },
  ],
};

export const reportRoutes: RoutePlugin<Deps<'store'>> = async (app, services) => {
  app.get(
    '/api/reports/daily',
    {
      config: { auth: 'op' },
      schema: {
        tags: [TAGS.operations],
        summary: 'Paid, refunded, fees and net per day and payment type (JSON or CSV)',
        description:
          `One row per day and payment type with any payment (of \`account\` only, when given). A payment counts on the day it was paid (settlement time, else transaction time) in \`tz\` (default ${DEFAULT_REPORT_TIME_ZONE}), with all that was refunded of it so far, so the rows of a period add up to its payments in \`/api/transactions\`. ` +
          `At most ${MAX_REPORT_DAYS} days. \`format=csv\` answers a spreadsheet-ready file (UTF-8 with BOM, header row, RFC 4180, \`,\` or with \`sep=;\` \`;\` between cells).`,
        querystring: Type.Object(
          {
            account: Type.Optional(AccountIdSchema),
            from: Type.String({
              maxLength: 10,
              pattern: '^\\d{4}-\\d{2}-\\d{2}$',
              description: 'First day, YYYY-MM-DD',
            }),
            to: Type.String({ maxLength: 10, pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Last day, YYYY-MM-DD' }),
            format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('csv')], { default: 'json' })),
            sep: CsvSeparatorParam,
            tz: Type.Optional(
              Type.String({ maxLength: 64, description: `IANA time zone, default ${DEFAULT_REPORT_TIME_ZONE}` }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Unsafe<unknown>({
            ...Type.Object({ items: Type.Array(DailyRowSchema) }),
            content: {
              'application/json': {
                schema: Type.Object({ items: Type.Array(DailyRowSchema) }),
                example: DAILY_EXAMPLE,
              },
              'text/csv': { schema: { type: 'string' } },
            },
          }),
          ...problems(400),
        },
      },
    },
    async (req, reply) => {
      const rows = await dailyReport(
        services,
        {
          account: req.query.account,
          from: req.query.from,
          to: req.query.to,
          timeZone: req.query.tz,
        },
        operatorActor(req),
      );
      if (req.query.format !== 'csv') return { items: rows };
      const sep = req.query.sep ?? ',';
      const lines = [
        CSV_BOM + csvLine(DAILY_COLUMNS, sep),
        ...rows.map((r) =>
          csvLine(
            DAILY_COLUMNS.map((c) => r[c]),
            sep,
          ),
        ),
      ];
      return reply
        .type(CSV_CONTENT_TYPE)
        .header('content-disposition', `attachment; filename="paylink-daily-${req.query.from}-${req.query.to}.csv"`)
        .send(Readable.from(lines));
    },
  );
};
