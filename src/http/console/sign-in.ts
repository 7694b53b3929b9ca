/**
 * The console's sign-in page and sign-out, for operators who sign in by name: a session cookie
 * (`HttpOnly`, `SameSite=Strict`, `Secure` behind HTTPS) holding a random id whose hash the store
 * keeps. These routes are public (`none`): they are how one gets in. A sign-in posted from another
 * site is refused like any operator change (Origin, Sec-Fetch-Site), so no page can sign a browser
 * in under someone else's name; the same throttle as Basic Auth counts its failures.
 */
import formbody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { RoutePlugin } from '../types.js';
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { createOperatorThrottle, LOCKOUT } from '../../domain/sign-in-throttle.js';
import { signIn } from '../../domain/operators/sign-in.js';
import { endSession, startSession } from '../../domain/operators/sessions.js';
import { auditSignInRefusal, SESSION_COOKIE, sessionCookie } from '../plugins/auth.js';
import { crossSiteRefusal } from '../plugins/same-origin.js';
import { langOf } from '../plugins/lang.js';
import { html } from './html.js';
import { alertBox, CONSOLE_CSS, type Alert } from './layout.js';
import { CONSOLE_CSP } from './scope.js';
import { consoleView } from './view.js';
import { consoleDoc } from './context.js';
import type { View } from './view.js';

const SignInBody = Type.Object(
  {
    username: Type.String({ maxLength: 200 }),
    password: Type.String({ maxLength: 1024 }),
    next: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const SignInQuery = Type.Object(
  {
    next: Type.Optional(Type.String({ maxLength: 500 })),
    ended: Type.Optional(Type.String({ maxLength: 1 })),
    lang: Type.Optional(Type.String({ maxLength: 5 })),
  },
  { additionalProperties: false },
);

/** The sign-in page, again with what went wrong when a sign-in was refused. */
const PageAnswer = Type.String({ description: 'The sign-in page (HTML).' });

/** Only a console page is a place to return to: anything else (another site, `//host`) goes to the overview. */
function nextPage(next: string | undefined): string {
  return next !== undefined && /^\/console(\/[^/\\]|$|\?)/.test(next) ? next : '/console';
}

function signInPage(v: View, o: { next: string; alert?: Alert; username?: string }): string {
  const { t } = v;
  return html`<!doctype html>
<html lang="${v.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t('signin_title')} · ${t('console_name')}</title>
<link rel="stylesheet" href="/sign-in/console.css">
</head>
<body>
<header><nav aria-label="${t('nav_label')}"><span class="brand">paylink</span></nav>
<nav class="langs" aria-label="${t('language')}"><a href="/sign-in?lang=en&amp;next=${encodeURIComponent(o.next)}" hreflang="en" lang="en"${v.lang === 'en' ? html` aria-current="true"` : ''}>English</a> · <a href="/sign-in?lang=id&amp;next=${encodeURIComponent(o.next)}" hreflang="id" lang="id"${v.lang === 'id' ? html` aria-current="true"` : ''}>Bahasa Indonesia</a></nav>
</header>
<main id="main">
<h1>${t('signin_title')}</h1>
${alertBox(o.alert)}
<form method="post" action="/sign-in" class="confirm">
<input type="hidden" name="next" value="${o.next}">
<label>${t('signin_username')}<input name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="200" value="${o.username ?? ''}"></label>
<label>${t('signin_password')}<input type="password" name="password" autocomplete="current-password" required maxlength="1024"></label>
<button type="submit">${t('signin_button')}</button>
</form>
</main>
</body>
</html>`.text;
}

function cookieHeader(req: FastifyRequest, publicBaseUrl: string, value: string, maxAge?: number): string {
  const secure = publicBaseUrl.startsWith('https:') || req.protocol === 'https';
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}${maxAge === undefined ? '' : `; Max-Age=${maxAge}`}`;
}

function send(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .send(body);
}

function refuseCrossSite(req: FastifyRequest, publicBaseUrl: string): void {
  const why = crossSiteRefusal(req, publicBaseUrl);
  if (why) throw new AppError('CROSS_SITE_REFUSED', `Refused: ${why}.`);
}

export const signInRoutes: RoutePlugin<Deps<'clock' | 'config' | 'logger' | 'operator' | 'store'>> = async (
  app,
  services,
) => {
  await app.register(formbody, { bodyLimit: 4 * 1024 });
  const throttle = createOperatorThrottle(services);
  const view = (req: FastifyRequest, reply: FastifyReply) =>
    consoleView(langOf(req, reply), services.config.consoleTimeZone);

  app.get(
    '/sign-in/console.css',
    {
      config: { auth: 'none' },
      schema: consoleDoc(
        'Sign-in page stylesheet',
        "The console's stylesheet for the sign-in page, which is shown before any credentials.",
      ),
    },
    async (_req, reply) => reply.type('text/css; charset=utf-8').send(CONSOLE_CSS),
  );

  app.get(
    '/sign-in',
    {
      config: { auth: 'none' },
      schema: {
        ...consoleDoc(
          'Console: sign in (HTML)',
          'The sign-in page of operators who sign in by name; a console page opened without credentials leads here once any operator is stored.',
        ),
        querystring: SignInQuery,
        response: { 200: PageAnswer },
      },
    },
    async (req, reply) => {
      const v = view(req, reply);
      const alert: Alert | undefined = req.query.ended ? { kind: 'ok', text: v.t('signin_ended') } : undefined;
      return send(reply, 200, signInPage(v, { next: nextPage(req.query.next), alert }));
    },
  );

  app.post(
    '/sign-in',
    {
      config: { auth: 'none' },
      schema: {
        ...consoleDoc(
          'Console: sign in',
          'A form post (username, password): a console session cookie (HttpOnly, SameSite=Strict, Secure behind HTTPS, ends after 12 h idle) and a redirect to the console; wrong credentials answer the page again (401), a locked name 429. Counted with the Basic Auth failures.',
        ),
        body: SignInBody,
        response: {
          303: Type.Null({ description: 'Signed in: the session cookie is set; on to the console page asked for.' }),
          401: PageAnswer,
          429: PageAnswer,
        },
      },
    },
    async (req, reply) => {
      refuseCrossSite(req, services.config.publicBaseUrl);
      const v = view(req, reply);
      const next = nextPage(req.body.next);
      const { username, password } = req.body;
      const result = await signIn(services, throttle, { user: username, pass: password, ip: req.ip });
      if (result.kind === 'ok') {
        const id = await startSession(services, result.identity, req.ip);
        return reply
          .code(303)
          .header('set-cookie', cookieHeader(req, services.config.publicBaseUrl, id))
          .header('location', next)
          .send(null);
      }
      auditSignInRefusal(services, req, result, 'form');
      const lockedFor = result.kind === 'locked' ? result.lockedFor : result.lockedFor > 0 ? LOCKOUT.lockMs / 1000 : 0;
      const text =
        lockedFor > 0 ? v.t('signin_locked', { minutes: String(Math.ceil(lockedFor / 60)) }) : v.t('signin_failed');
      if (lockedFor > 0) reply.header('retry-after', String(lockedFor));
      return send(
        reply,
        lockedFor > 0 ? 429 : 401,
        signInPage(v, {
          next,
          alert: { kind: 'error', text },
          username: result.kind === 'failed' && result.known ? result.known : '',
        }),
      );
    },
  );

  app.post(
    '/sign-out',
    {
      config: { auth: 'none' },
      schema: {
        ...consoleDoc(
          'Console: sign out',
          'Ends the console session at once, on every instance, clears its cookie and leads to the sign-in page.',
        ),
        response: { 303: Type.Null({ description: 'Signed out: the cookie is cleared; on to the sign-in page.' }) },
      },
    },
    async (req, reply) => {
      refuseCrossSite(req, services.config.publicBaseUrl);
      const id = sessionCookie(req);
      if (id !== undefined) await endSession(services, id, req.ip);
      return reply
        .code(303)
        .header('set-cookie', cookieHeader(req, services.config.publicBaseUrl, '', 0))
        .header('location', '/sign-in?ended=1')
        .send(null);
    },
  );
};
