/**
 * Console CSRF tokens are this service's own, bound to the operator and short-lived; and no
 * operator change is taken from a page of another site, token or not, body or not.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import type { HTTPMethods } from 'fastify';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { OPERATOR, basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { formState } from '../helpers/console-forms.js';
import { CSRF_VALIDITY_MS } from '../../src/http/console/context.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
/** A console form with no side effect: retrying an event that does not exist answers 404 once past the CSRF check. */
const RETRY_FORM = '/console/deliveries/no-such-event/retry';

/** A cookie and token pair as anyone can mint them with @fastify/csrf-protection (defaults, or with options of their own). */
async function mintedElsewhere(
  csrfOpts?: { hmacKey: string; validity: number; userInfo?: boolean },
  userInfo?: string,
): Promise<{ token: string; cookie: string }> {
  const other = Fastify();
  await other.register(cookie);
  await other.register(csrf, {
    cookieOpts: { path: '/' },
    ...(csrfOpts ? { csrfOpts } : {}),
    ...(userInfo ? { getUserInfo: () => userInfo } : {}),
  });
  other.get('/mint', async (_req, reply) => ({ token: reply.generateCsrf(userInfo ? { userInfo } : undefined) }));
  try {
    const res = await other.inject({ method: 'GET', url: '/mint' });
    return formState({ body: `name="_csrf" value="${(res.json() as { token: string }).token}"`, headers: res.headers });
  } finally {
    await other.close();
  }
}

describe.each(DATABASE_KINDS)('console CSRF tokens (%s)', (kind) => {
  let ops: LoggedApp;
  let opsAgain: LoggedApp;
  let auditor: LoggedApp;
  const AUDITOR = { user: 'auditor', pass: 'another long operator password' };
  beforeAll(async () => {
    ops = await makeLoggedApp(kind);
    // Two more instances in this process (so with the same key): one for the same operator, one for another.
    opsAgain = await makeLoggedApp(kind);
    auditor = await makeLoggedApp(kind, {}, {}, AUDITOR);
  });
  afterAll(async () => {
    await ops.close();
    await opsAgain.close();
    await auditor.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const page = async (app: LoggedApp, auth = basicAuth()) =>
    formState(await app.app.inject({ method: 'GET', url: '/console/config', headers: { authorization: auth } }));
  const submit = (
    app: LoggedApp,
    pair: { token: string; cookie: string },
    auth = basicAuth(),
    headers: Record<string, string> = {},
  ) =>
    app.app.inject({
      method: 'POST',
      url: RETRY_FORM,
      payload: `_csrf=${encodeURIComponent(pair.token)}`,
      headers: { authorization: auth, cookie: pair.cookie, ...FORM, ...headers },
    });

  it('a pair the console issued is taken (control), also by another instance for the same operator', async () => {
    const pair = await page(ops);
    expect(pair.token).not.toBe('');
    expect((await submit(ops, pair)).statusCode).toBe(404);
    expect((await submit(opsAgain, pair)).statusCode).toBe(404);
  });

  it('a pair minted by anyone with the same library is refused, whatever its options', async () => {
    for (const pair of [
      await mintedElsewhere(),
      await mintedElsewhere({ hmacKey: 'an attacker key', validity: CSRF_VALIDITY_MS }, `operator:${OPERATOR.user}`),
    ]) {
      const res = await submit(ops, pair);
      expect(res.statusCode).toBe(403);
      expect(res.body).toContain('CSRF_INVALID');
    }
  });

  it('a token issued to one operator is refused for another', async () => {
    const pair = await page(ops);
    const res = await submit(auditor, pair, basicAuth(AUDITOR.user, AUDITOR.pass));
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('CSRF_INVALID');
    expect(
      (
        await submit(
          auditor,
          await page(auditor, basicAuth(AUDITOR.user, AUDITOR.pass)),
          basicAuth(AUDITOR.user, AUDITOR.pass),
        )
      ).statusCode,
    ).toBe(404);
  });

  it('a token expires after 12 hours', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const pair = await page(ops);
    vi.setSystemTime(Date.now() + CSRF_VALIDITY_MS - 60_000);
    expect((await submit(ops, pair)).statusCode).toBe(404);
    vi.setSystemTime(Date.now() + 2 * 60_000);
    const res = await submit(ops, pair);
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('CSRF_INVALID');
    expect(CSRF_VALIDITY_MS).toBe(12 * 60 * 60 * 1000);
  });

  it('a valid pair from a page of another site is refused (Origin, Sec-Fetch-Site), as problem+json', async () => {
    const pair = await page(ops);
    const crossSite: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site', origin: 'http://localhost' },
    ];
    for (const headers of crossSite) {
      const res = await submit(ops, pair, basicAuth(), headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(403);
      expect(res.headers['content-type'], JSON.stringify(headers)).toMatch(/^application\/problem\+json/);
      expect(res.json(), JSON.stringify(headers)).toMatchObject({ code: 'CROSS_SITE_REFUSED', status: 403 });
    }
    const sameSite: Array<Record<string, string>> = [
      { origin: 'http://localhost' },
      { 'sec-fetch-site': 'same-origin', origin: 'http://localhost' },
      { 'sec-fetch-site': 'none' },
    ];
    for (const headers of sameSite) {
      expect((await submit(ops, pair, basicAuth(), headers)).statusCode, JSON.stringify(headers)).toBe(404);
    }
  });
});

describe.each(DATABASE_KINDS)('operator changes from another site are refused on every route (%s)', (kind) => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp(kind, { LOG_EXPOSE_API: 'true', PUBLIC_BASE_URL: 'https://pay.example.com' });
  });
  afterAll(async () => ctx.close());

  /** Every operator route with a method that changes something, as a concrete request. */
  function changingRoutes(): Array<{ method: HTTPMethods; url: string }> {
    const out: Array<{ method: HTTPMethods; url: string }> = [];
    for (const r of ctx.routes) {
      if (r.config?.auth !== 'op') continue;
      for (const method of (Array.isArray(r.method) ? r.method : [r.method]).filter(
        (m) => !['GET', 'HEAD', 'OPTIONS'].includes(m),
      ))
        out.push({ method, url: r.url.replace(/:[A-Za-z_]+/g, 'x') });
    }
    return out;
  }

  it('with the right credentials and a cross-site Origin: 403 problem+json, nothing done', async () => {
    const routes = changingRoutes();
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(
      expect.arrayContaining([
        'POST /api/config',
        'POST /api/deliveries/x/retry',
        'POST /test-notify-erp',
        'POST /webhook/midtrans/replay',
        'POST /console/config',
      ]),
    );
    for (const { method, url } of routes) {
      const res = await ctx.app.inject({
        method,
        url,
        headers: { authorization: basicAuth(), origin: 'http://evil.example' },
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.headers['content-type'], `${method} ${url}`).toMatch(/^application\/problem\+json/);
      expect(res.json(), `${method} ${url}`).toMatchObject({ code: 'CROSS_SITE_REFUSED' });
    }
    expect(await ctx.store.db.selectFrom('outbox_events').select('event_id').execute()).toEqual([]);
    expect(await ctx.store.db.selectFrom('runtime_config').selectAll().execute()).toEqual([]);
    const audit = (await ctx.lines()).filter(
      (l) =>
        typeof l.audit === 'object' &&
        l.audit !== null &&
        'action' in l.audit &&
        l.audit.action === 'cross_site_refused',
    );
    expect(audit.length).toBe(routes.length);
  });

  it('POSTs without a body: the same refusal from another site; from curl (no Origin) or the public origin they run', async () => {
    for (const url of ['/api/deliveries/no-such-event/retry', '/test-notify-erp']) {
      const res = await ctx.app.inject({
        method: 'POST',
        url,
        headers: { authorization: basicAuth(), origin: 'https://evil.example' },
      });
      expect(res.statusCode, url).toBe(403);
    }
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/api/deliveries/no-such-event/retry',
          headers: { authorization: basicAuth() },
        })
      ).statusCode,
    ).toBe(404);
    expect(
      (
        await ctx.app.inject({
          method: 'POST',
          url: '/api/deliveries/no-such-event/retry',
          headers: { authorization: basicAuth(), origin: 'https://pay.example.com' },
        })
      ).statusCode,
    ).toBe(404);
    const sent = await ctx.app.inject({
      method: 'POST',
      url: '/test-notify-erp',
      headers: { authorization: basicAuth(), 'sec-fetch-site': 'same-origin' },
    });
    expect(sent.statusCode).toBeLessThan(300);
  });

  it('reads are not affected, and a cross-site request never counts as a failed login', async () => {
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { authorization: basicAuth(), origin: 'http://evil.example' },
        })
      ).statusCode,
    ).toBe(200);
    for (let i = 0; i < 12; i++) {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/api/config',
        headers: { authorization: basicAuth(OPERATOR.user, 'wrong'), origin: 'http://evil.example' },
        remoteAddress: '10.77.0.1',
      });
      expect(res.statusCode).toBe(403);
    }
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { authorization: basicAuth() },
          remoteAddress: '10.77.0.1',
        })
      ).statusCode,
    ).toBe(200);
  });
});
