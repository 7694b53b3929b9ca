/** The console's pages that only show: the overview, payments, deliveries and logs, and its own stylesheet and script. */
import { Type } from 'typebox';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { OptionalStr } from '../schemas/common.js';
import { AppError } from '../../platform/errors.js';
import { findTransaction } from '../../domain/orders/links.js';
import { CONSOLE_CSS, CONSOLE_JS } from './layout.js';
import { overviewBody } from './overview.js';
import { transactionsBody } from './transactions.js';
import { downloadsForm } from './downloads.js';
import { html } from './html.js';
import { transactionBody } from './transaction-page.js';
import { deliveriesBody } from './deliveries.js';
import { logFileBody, logsBody } from './logs.js';
import { LangQuery, consoleDoc as doc, doneAlert } from './context.js';
import { consoleContext } from './scope.js';
import { operatorActor } from '../plugins/actor.js';
import { inAccount } from '../../domain/accounts/scope.js';
import { DEFAULT_ACCOUNT } from '../../model/account.js';
import { AccountQuery, switchableAccounts } from './accounts.js';

export const consolePages: RoutePlugin<
  Deps<'clock' | 'config' | 'formKeySecret' | 'gateway' | 'gateways' | 'logger' | 'runtimeConfig' | 'store' | 'version'>
> = async (s, services) => {
  const ctx = consoleContext(services);

  s.get(
    '/console',
    {
      config: { auth: 'op' },
      schema: {
        tags: ['Operations'],
        summary: 'Operator console (HTML)',
        description:
          'Overview of payments, ERP deliveries and health; links to transactions, deliveries, logs and configuration. Behind the operator credentials.',
        querystring: Type.Object({ lang: LangQuery }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      return ctx.render(reply, req, {
        title: v.t('title_overview'),
        section: 'overview',
        body: await overviewBody(services, v, operatorActor(req)),
      });
    },
  );
  s.get(
    '/console/assets/console.css',
    {
      config: { auth: 'op' },
      schema: doc('Console stylesheet', "The console's only stylesheet (the CSP allows no inline style)."),
    },
    async (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS),
  );
  s.get(
    '/console/assets/console.js',
    {
      config: { auth: 'op' },
      schema: doc(
        'Console script',
        "The console's only script: the copy-link button (the CSP allows no inline script).",
      ),
    },
    async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS),
  );

  s.get(
    '/console/transactions',
    {
      config: { auth: 'op' },
      schema: {
        ...doc(
          'Console: transactions',
          'Search by order id, mercant_id, status, payment type, creation date and account (`account`; every account the operator may see when absent); paged, newest first. With more than one account, each row names its account.',
        ),
        querystring: Type.Object({
          q: OptionalStr(200),
          mercant_id: OptionalStr(200),
          status: OptionalStr(40),
          payment_type: OptionalStr(40),
          from: OptionalStr(20),
          to: OptionalStr(20),
          account: OptionalStr(32),
          page: OptionalStr(6),
          lang: LangQuery,
        }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const { lang: _lang, ...query } = req.query;
      const accounts = await switchableAccounts(services, req);
      const { body, alert } = await transactionsBody(services, query, v, { actor: operatorActor(req), accounts });
      return ctx.render(reply, req, {
        title: v.t('title_transactions'),
        section: 'transactions',
        body: html`${body}${downloadsForm(v, query, services.clock.now())}`,
        alert,
      });
    },
  );

  s.get(
    '/console/transactions/:order_id',
    {
      config: { auth: 'op' },
      schema: {
        ...doc(
          'Console: one payment',
          'Its details, its timeline (gateway calls, notifications, status changes, ERP delivery attempts, refunds) and its actions.',
        ),
        params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 512 }) }),
        querystring: Type.Object({ account: AccountQuery, done: OptionalStr(40), lang: LangQuery }),
      },
    },
    async (req, reply) => {
      const scoped = inAccount(services, req.query.account ?? DEFAULT_ACCOUNT);
      const tx = await findTransaction(scoped, req.params.order_id, operatorActor(req));
      if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(req.params.order_id)}.`);
      const v = ctx.view(req, reply);
      return ctx.render(reply, req, {
        title: v.t('title_payment', { order: tx.orderId }),
        section: 'transactions',
        body: await transactionBody(scoped, tx, v, ctx.formTokens(req, reply)),
        alert: doneAlert(v, req.query.done),
      });
    },
  );

  s.get(
    '/console/deliveries',
    {
      config: { auth: 'op' },
      schema: {
        ...doc(
          'Console: failing and dead ERP deliveries',
          'Events the ERP has not accepted yet, each with a retry button; of one account with `account` (every account the operator may see when absent).',
        ),
        querystring: Type.Object({
          state: OptionalStr(10),
          account: OptionalStr(32),
          page: OptionalStr(6),
          done: OptionalStr(40),
          lang: LangQuery,
        }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const scope = {
        actor: operatorActor(req),
        account: req.query.account,
        accounts: await switchableAccounts(services, req),
      };
      return ctx.render(reply, req, {
        title: v.t('title_deliveries'),
        section: 'deliveries',
        body: await deliveriesBody(services, req.query.state, req.query.page, v, ctx.formTokens(req, reply), scope),
        alert: doneAlert(v, req.query.done),
      });
    },
  );

  s.get(
    '/console/logs',
    {
      config: { auth: 'op' },
      schema: {
        ...doc('Console: log search', 'The search of GET /api/logs as a page; request ids link to their lines.'),
        querystring: Type.Object({
          q: OptionalStr(200),
          level: OptionalStr(10),
          order_id: OptionalStr(512),
          request_id: OptionalStr(64),
          console: OptionalStr(1),
          cursor: OptionalStr(400),
          lang: LangQuery,
        }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const { lang: _lang, ...query } = req.query;
      const { body, alert } = await logsBody(services, query, v);
      return ctx.render(reply, req, { title: v.t('title_logs'), section: 'logs', body, alert });
    },
  );
  s.get(
    '/console/logs/view',
    {
      config: { auth: 'op' },
      schema: {
        ...doc('Console: one log file', 'The last 500 lines of one file listed by GET /api/logs/files.'),
        querystring: Type.Object({ file: OptionalStr(200), lang: LangQuery }),
      },
    },
    async (req, reply) => {
      const v = ctx.view(req, reply);
      const body = await logFileBody(services, req.query.file, operatorActor(req), v);
      if (!body) throw new AppError('NOT_FOUND', v.t('lg_no_file'));
      return ctx.render(reply, req, {
        title: v.t('title_log_file', { file: req.query.file ?? '' }),
        section: 'logs',
        body,
      });
    },
  );
};
