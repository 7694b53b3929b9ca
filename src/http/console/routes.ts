/**
 * The operator console at `/console`: server-rendered HTML behind the operator's Basic credentials,
 * plain forms (POST, then a redirect) with a CSRF token, one small script of our own, and a
 * Content-Security-Policy that allows nothing but this origin.
 */
import formbody from '@fastify/formbody';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import { Type } from 'typebox';
import type { App } from '../types.js';
import { OptionalStr } from '../schemas/common.js';
import type { Services } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { errorHandler, toProblem } from '../plugins/errors.js';
import { findTransaction } from '../../domain/orders/links.js';
import { html } from './html.js';
import { CONSOLE_CSS, CONSOLE_JS, page } from './layout.js';
import { overviewBody } from './overview.js';
import { transactionsBody } from './transactions.js';
import { transactionBody } from './transaction-page.js';
import { deliveriesBody } from './deliveries.js';
import { logFileBody, logsBody } from './logs.js';
import { consoleActionRoutes } from './actions.js';
import { issueFormKey } from './form-keys.js';
import { CSRF_VALIDITY_MS, LangQuery, consoleDoc as doc, doneAlert, errorAlert, operatorBinding, type ConsoleContext } from './context.js';
import { consoleView } from './view.js';
import { langOf } from '../plugins/lang.js';
import { consoleConfigRoutes } from './config-routes.js';
import { consoleReconciliationRoutes } from './reconciliation-page.js';
import { operatorActor } from '../plugins/actor.js';

export const CONSOLE_CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** Form bodies, the CSRF token's cookie, and the security headers of every console answer. */
async function consoleSecurity(s: App, services: Services): Promise<void> {
  await s.register(formbody, { bodyLimit: 16 * 1024 });
  await s.register(cookie);
  // Tokens are HMACs with a key of this service (so a pair minted elsewhere, even with this very
  // library, is refused), over the operator's name (a form shown to one operator is no good to
  // another) and the time of issue (refused after CSRF_VALIDITY_MS).
  await s.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: '_csrf',
    cookieOpts: { path: '/console', httpOnly: true, sameSite: 'strict', secure: services.config.publicBaseUrl.startsWith('https:') },
    csrfOpts: { hmacKey: services.csrfKey, validity: CSRF_VALIDITY_MS },
    getUserInfo: (req) => operatorBinding(req),
  });
  s.addHook('onSend', async (_req, reply, payload) => {
    reply.header('content-security-policy', CONSOLE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    reply.header('cache-control', 'no-store');
    return payload;
  });
}

/** What went wrong, shown as a console page. */
function consoleErrorPages(s: App, ctx: ConsoleContext): void {
  s.setErrorHandler(async (err, req, reply) => {
    const e = toProblem(err, req);
    // Credentials problems answer like every operator route (the browser shows its own sign-in
    // dialog), and so does a cross-site refusal: no page is rendered for another site's request.
    if (e.status === 401 || e.status === 429 || e.code === 'CROSS_SITE_REFUSED') return errorHandler.call(s, e, req, reply);
    for (const [k, v] of Object.entries(e.extras.headers ?? {})) reply.header(k, v);
    const v = ctx.view(req, reply);
    return ctx.render(reply, req, { title: v.t('cannot_do_that'), section: 'overview', status: e.status, alert: errorAlert(v, e, req.id), body: html`<p><a href="/console">${v.t('back_to_overview')}</a></p>` });
  });
}

export async function consoleRoutes(app: App, services: Services): Promise<void> {
  await app.register(async (scope) => {
    const s = scope as App;
    await consoleSecurity(s, services);
    const timeZone = services.config.consoleTimeZone;
    const ctx: ConsoleContext = {
      services,
      timeZone,
      view: (req, reply) => consoleView(langOf(req, reply), timeZone),
      render(reply, req, o) {
        const view = ctx.view(req, reply);
        const here = o.here ?? (req.method === 'GET' ? req.url : '/console');
        return reply
          .code(o.status ?? 200)
          .type('text/html; charset=utf-8')
          .send(page({ ...o, user: req.operatorUser, view, here }));
      },
      csrfToken: (req, reply) => reply.generateCsrf({ userInfo: operatorBinding(req) }),
      formTokens: (req, reply) => ({ csrf: ctx.csrfToken(req, reply), key: (request) => issueFormKey(services, operatorBinding(req), request) }),
    };
    consoleErrorPages(s, ctx);

    s.get('/console', { config: { auth: 'op' }, schema: { tags: ['Operations'], summary: 'Operator console (HTML)', description: 'Overview of payments, ERP deliveries and health; links to transactions, deliveries, logs and configuration. Behind the operator credentials.', querystring: Type.Object({ lang: LangQuery }) } }, async (req, reply) => {
      const v = ctx.view(req, reply);
      return ctx.render(reply, req, { title: v.t('title_overview'), section: 'overview', body: await overviewBody(services, v) });
    });
    s.get('/console/assets/console.css', { config: { auth: 'op' }, schema: doc('Console stylesheet', 'The console\'s only stylesheet (the CSP allows no inline style).') }, async (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS));
    s.get('/console/assets/console.js', { config: { auth: 'op' }, schema: doc('Console script', 'The console\'s only script: the copy-link button (the CSP allows no inline script).') }, async (_req, reply) => reply.type('text/javascript; charset=utf-8').send(CONSOLE_JS));

    s.get(
      '/console/transactions',
      { config: { auth: 'op' }, schema: { ...doc('Console: transactions', 'Search by order id, mercant_id, status, payment type and creation date; paged, newest first.'), querystring: Type.Object({ q: OptionalStr(200), mercant_id: OptionalStr(200), status: OptionalStr(40), payment_type: OptionalStr(40), from: OptionalStr(20), to: OptionalStr(20), page: OptionalStr(6), lang: LangQuery }) } },
      async (req, reply) => {
        const v = ctx.view(req, reply);
        const { lang: _lang, ...query } = req.query;
        const { body, alert } = await transactionsBody(services, query, v);
        return ctx.render(reply, req, { title: v.t('title_transactions'), section: 'transactions', body, alert });
      },
    );

    s.get(
      '/console/transactions/:order_id',
      { config: { auth: 'op' }, schema: { ...doc('Console: one payment', 'Its details, its timeline (gateway calls, notifications, status changes, ERP delivery attempts, refunds) and its actions.'), params: Type.Object({ order_id: Type.String({ minLength: 1, maxLength: 512 }) }), querystring: Type.Object({ done: OptionalStr(40), lang: LangQuery }) } },
      async (req, reply) => {
        const tx = await findTransaction(services, req.params.order_id);
        if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(req.params.order_id)}.`);
        const v = ctx.view(req, reply);
        return ctx.render(reply, req, { title: v.t('title_payment', { order: tx.orderId }), section: 'transactions', body: await transactionBody(services, tx, v, ctx.formTokens(req, reply)), alert: doneAlert(v, req.query.done) });
      },
    );

    s.get('/console/deliveries', { config: { auth: 'op' }, schema: { ...doc('Console: failing and dead ERP deliveries', 'Events the ERP has not accepted yet, each with a retry button.'), querystring: Type.Object({ state: OptionalStr(10), page: OptionalStr(6), done: OptionalStr(40), lang: LangQuery }) } }, async (req, reply) => {
      const v = ctx.view(req, reply);
      return ctx.render(reply, req, { title: v.t('title_deliveries'), section: 'deliveries', body: await deliveriesBody(services, req.query.state, req.query.page, v, ctx.formTokens(req, reply)), alert: doneAlert(v, req.query.done) });
    });

    s.get(
      '/console/logs',
      { config: { auth: 'op' }, schema: { ...doc('Console: log search', 'The search of GET /api/logs as a page; request ids link to their lines.'), querystring: Type.Object({ q: OptionalStr(200), level: OptionalStr(10), order_id: OptionalStr(512), request_id: OptionalStr(64), cursor: OptionalStr(400), lang: LangQuery }) } },
      async (req, reply) => {
        const v = ctx.view(req, reply);
        const { lang: _lang, ...query } = req.query;
        const { body, alert } = await logsBody(services, query, v);
        return ctx.render(reply, req, { title: v.t('title_logs'), section: 'logs', body, alert });
      },
    );
    s.get('/console/logs/view', { config: { auth: 'op' }, schema: { ...doc('Console: one log file', 'The last 500 lines of one file listed by GET /api/logs/files.'), querystring: Type.Object({ file: OptionalStr(200), lang: LangQuery }) } }, async (req, reply) => {
      const v = ctx.view(req, reply);
      const body = await logFileBody(services, req.query.file, operatorActor(req), v);
      if (!body) throw new AppError('NOT_FOUND', v.t('lg_no_file'));
      return ctx.render(reply, req, { title: v.t('title_log_file', { file: req.query.file ?? '' }), section: 'logs', body });
    });

    await consoleActionRoutes(s, ctx);
    await consoleConfigRoutes(s, ctx);
    await consoleReconciliationRoutes(s, ctx);
  });
}

