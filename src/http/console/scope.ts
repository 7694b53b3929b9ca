/**
 * The operator console at `/console`: server-rendered HTML behind the operator's Basic credentials,
 * plain forms (POST, then a redirect) with a CSRF token, one small script of our own, and a
 * Content-Security-Policy that allows nothing but this origin. Its pages share one scope: form
 * bodies, the CSRF cookie, these headers and error pages hold there and nowhere else of the app.
 */
import type { FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { App, Mount } from '../types.js';
import type { Deps } from '../../types.js';
import { errorHandler, toProblem } from '../plugins/errors.js';
import { langOf } from '../plugins/lang.js';
import { html } from './html.js';
import { page } from './layout.js';
import { issueFormKey } from './form-keys.js';
import { CSRF_VALIDITY_MS, errorAlert, operatorBinding, type ConsoleContext } from './context.js';
import { consoleView } from './view.js';
import { hasRole } from '../../domain/operators/access.js';
import { operatorActor } from '../plugins/actor.js';

/** Requests of the console answered while the gateway is the simulator: their pages carry the banner saying no money moves. */
const simulated = new WeakSet<FastifyRequest>();

/** The rendering of console pages in the operator's language and the console's time zone, with the tokens of their forms. */
export function consoleContext(services: Deps<'clock' | 'config' | 'formKeySecret'>): ConsoleContext {
  const timeZone = services.config.consoleTimeZone;
  const ctx: ConsoleContext = {
    timeZone,
    view: (req, reply) => consoleView(langOf(req, reply), timeZone),
    render(reply, req, o) {
      const view = ctx.view(req, reply);
      const here = o.here ?? (req.method === 'GET' ? req.url : '/console');
      return reply
        .code(o.status ?? 200)
        .type('text/html; charset=utf-8')
        .send(
          page({
            ...o,
            user: req.operatorUser,
            // The operator of log_user through Basic Auth sees the page as it always was.
            role:
              req.operatorSession === true || req.operatorIdentity?.role !== 'admin'
                ? req.operatorIdentity?.role
                : undefined,
            signOut: req.operatorSession === true,
            admin: req.operatorIdentity?.role === 'admin',
            view,
            here,
            simulator: simulated.has(req),
          }),
        );
    },
    csrfToken: (req, reply) => reply.generateCsrf({ userInfo: operatorBinding(req) }),
    formTokens: (req, reply) => ({
      csrf: ctx.csrfToken(req, reply),
      key: (request) => issueFormKey(services, operatorBinding(req), request),
      may: (role) => ctx.may(req, role),
    }),
    may: (req, role) => hasRole(operatorActor(req), role),
  };
  return ctx;
}

export const CONSOLE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** Form bodies, the CSRF token's cookie, and the security headers of every console answer. */
async function consoleSecurity(s: App, services: Deps<'config' | 'csrfKey'>): Promise<void> {
  await s.register(formbody, { bodyLimit: 16 * 1024 });
  await s.register(cookie);
  // Tokens are HMACs with a key of this service (so a pair minted elsewhere, even with this very
  // library, is refused), over the operator's name (a form shown to one operator is no good to
  // another) and the time of issue (refused after CSRF_VALIDITY_MS).
  await s.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: '_csrf',
    cookieOpts: {
      path: '/console',
      httpOnly: true,
      sameSite: 'strict',
      secure: services.config.publicBaseUrl.startsWith('https:'),
    },
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
    if (e.status === 401 || e.status === 429 || e.code === 'CROSS_SITE_REFUSED')
      return errorHandler.call(s, e, req, reply);
    for (const [k, v] of Object.entries(e.extras.headers ?? {})) reply.header(k, v);
    const v = ctx.view(req, reply);
    return ctx.render(reply, req, {
      title: v.t('cannot_do_that'),
      section: 'overview',
      status: e.status,
      alert: errorAlert(v, e, req.id),
      body: html`<p><a href="/console">${v.t('back_to_overview')}</a></p>`,
    });
  });
}

/** The console's scope, with its `pages` (route plugins) registered inside it. */
export function consoleScope(
  services: Deps<'clock' | 'config' | 'csrfKey' | 'formKeySecret' | 'runtimeConfig'>,
  pages: Mount[],
): Mount {
  return async (app) => {
    await app.register(async (scope) => {
      await consoleSecurity(scope, services);
      scope.addHook('preHandler', async (req) => {
        // The runtime configuration decides (it can be switched from the console); unknown: no banner.
        const mode = await services.runtimeConfig.current().then(
          (c) => c.gateway.mode,
          () => undefined,
        );
        if (mode === 'simulator') simulated.add(req);
      });
      consoleErrorPages(scope, consoleContext(services));
      for (const mount of pages) await mount(scope);
    });
  };
}
