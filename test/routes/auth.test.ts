import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HTTPMethods } from 'fastify';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { OPERATOR, basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import type { Clock } from '../../src/platform/clock.js';

class ManualClock implements Clock {
  constructor(public t = Date.parse('2026-11-22T10:00:00Z')) {}
  now() {
    return new Date(this.t);
  }
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const BAD_HEADERS: Array<[string, Record<string, string>]> = [
  ['no header', {}],
  ['wrong user', { authorization: basicAuth('intruder', OPERATOR.pass) }],
  ['wrong password', { authorization: basicAuth(OPERATOR.user, 'nope') }],
  ['malformed base64', { authorization: 'Basic %%%not-base64%%%' }],
  ['base64 without a colon', { authorization: `Basic ${b64(`${OPERATOR.user}${OPERATOR.pass}`)}` }],
  ['empty Basic', { authorization: 'Basic ' }],
  ['Bearer', { authorization: `Bearer ${OPERATOR.pass}` }],
  ['credentials in the query string only', {}],
];

/** Each operator route, as a concrete request (path parameters filled, HEAD and wildcards skipped). */
function protectedRoutes(ctx: LoggedApp): Array<{ method: HTTPMethods; url: string }> {
  const out: Array<{ method: HTTPMethods; url: string }> = [];
  for (const r of ctx.routes) {
    if (r.config?.auth !== 'op') continue;
    const methods = (Array.isArray(r.method) ? r.method : [r.method]).filter((m) => m !== 'HEAD');
    const url = r.url.replace(/:[A-Za-z_]+/g, 'x').replace(/\*$/, 'x');
    for (const method of methods) out.push({ method, url });
  }
  return out;
}

describe.each(DATABASE_KINDS)('operator Basic Auth on every protected route (%s)', (kind) => {
  let ctx: LoggedApp;
  const clock = new ManualClock();
  beforeAll(async () => {
    ctx = await makeLoggedApp(kind, { LOG_EXPOSE_API: 'true' }, { clock });
  });
  afterAll(async () => ctx.close());

  it("every route declares the auth the contract gives it: the operator set is exactly the contract's", () => {
    const byAuth = new Map<string, Set<string>>();
    for (const r of ctx.routes) {
      const methods = (Array.isArray(r.method) ? r.method : [r.method]).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      const auth = String(r.config?.auth);
      const set = byAuth.get(auth) ?? new Set<string>();
      for (const m of methods) set.add(`${m} ${r.url}`);
      byAuth.set(auth, set);
    }
    const op = [...(byAuth.get('op') ?? [])].filter(
      (k) => !/^\S+ \/echo2?$/.test(k) && !/^\S+ \/console(\/|$)/.test(k),
    );
    // The console (HTML pages, their assets and forms) is wholly behind the operator credentials.
    const consoleRoutes = [...byAuth.entries()].flatMap(([auth, set]) =>
      [...set].filter((k) => /^\S+ \/console(\/|$)/.test(k)).map((k) => `${auth} ${k}`),
    );
    expect(consoleRoutes).toContain('op GET /console');
    expect(consoleRoutes.filter((k) => !k.startsWith('op '))).toEqual([]);
    expect(op.sort()).toEqual(
      [
        'GET /api/config',
        'POST /api/config',
        'POST /webhook/midtrans/replay',
        'GET /api/logs',
        'GET /api/logs/files',
        'GET /api/logs/view',
        'POST /test-notify-erp',
        'GET /api/transactions',
        'GET /api/deliveries',
        'POST /api/deliveries/:id/retry',
        'POST /api/deliveries/replay',
        'GET /metrics',
        'POST /api/reconciliation/imports',
        'GET /api/reconciliation/imports',
        'GET /api/reconciliation/imports/:id',
        // A day of the gateway's transaction history reconciled now (finance and admin).
        'POST /api/reconciliation/history-runs',
        'GET /api/reports/daily',
        'GET /api/transactions/export',
        // Contract §13: operators and who is signed in.
        'GET /api/operators',
        'POST /api/operators',
        'PATCH /api/operators/:username',
        'POST /api/operators/:username/unlock',
        'GET /api/me',
        // Contract §12: accounts and their API keys.
        'GET /api/accounts',
        'POST /api/accounts',
        'DELETE /api/accounts/:id',
        'GET /api/accounts/:id/config',
        'POST /api/accounts/:id/config',
        'POST /api/accounts/:id/api-keys',
        'GET /api/accounts/:id/api-keys',
        'DELETE /api/accounts/:id/api-keys/:key_id',
      ].sort(),
    );
    // /echo and /echo2 answer any method, all of them behind operator auth
    for (const u of ['/echo', '/echo2'])
      for (const m of ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'])
        expect(byAuth.get('op'), `${m} ${u}`).toContain(`${m} ${u}`);
    expect([...(byAuth.get('key') ?? [])].sort()).toEqual(
      [
        'POST /createtransaksi',
        'POST /api/payment-links',
        'GET /api/payment-links/:order_id',
        'DELETE /api/payment-links/:order_id',
        'POST /api/charge',
        'POST /api/snap/token',
        'GET /api/payments/:order_id/status',
        'POST /api/payments/:order_id/refund',
        'POST /api/payments/:order_id/cancel',
        'POST /api/payments/:order_id/expire',
        'GET /api/erp-events',
        'POST /api/erp-events/ack',
      ].sort(),
    );
    // The description and its rendered reference: the operator or an API key.
    expect([...(byAuth.get('doc') ?? [])].sort()).toEqual(
      ['GET /openapi.json', 'GET /docs', 'GET /docs/scalar.js', 'GET /docs/init.js', 'GET /docs/docs.css'].sort(),
    );
    const snapBi = ['/v1.0/debit/notify', '/v1.0/qr/qr-mpm-notify', '/v1.0/transfer-va/payment'];
    expect([...(byAuth.get('sig') ?? [])].sort()).toEqual(
      [
        'POST /webhook/midtrans',
        'POST /webhook/midtrans/:account',
        ...snapBi.map((p) => `POST /webhook/snap-bi${p}`),
        ...snapBi.map((p) => `POST /webhook/snap-bi/:account${p}`),
      ].sort(),
    );
    expect([...(byAuth.get('none') ?? [])].sort()).toEqual(
      [
        'GET /',
        'GET /health',
        'GET /health/live',
        'GET /health/ready',
        // Contract §13: the console's sign-in page (how one gets in) and sign-out.
        'GET /sign-in',
        'GET /sign-in/console.css',
        'POST /sign-in',
        'POST /sign-out',
      ].sort(),
    );
    expect([...byAuth.keys()].sort()).toEqual(['doc', 'key', 'none', 'op', 'sig']);
  });

  it('answers 401 with WWW-Authenticate for every bad credential on every operator route', async () => {
    const routes = protectedRoutes(ctx);
    let checked = 0;
    for (const { method, url } of routes) {
      for (const [name, headers] of BAD_HEADERS) {
        // Each round from its own address, so the lockout never interferes with this matrix.
        const remoteAddress = `10.1.${Math.floor(checked / 250)}.${checked % 250}`;
        const q = name.startsWith('credentials in the query')
          ? `?user=${OPERATOR.user}&password=${encodeURIComponent(OPERATOR.pass)}`
          : '';
        const res = await ctx.app.inject({
          method,
          url: `${url}${q}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload: method === 'GET' || method === 'OPTIONS' ? undefined : '{}',
          remoteAddress,
        });
        expect(res.statusCode, `${method} ${url} with ${name}`).toBe(401);
        expect(res.headers['www-authenticate'], `${method} ${url} with ${name}`).toMatch(/^Basic realm="paylink"/);
        expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(10 * BAD_HEADERS.length);
  });

  it('lets the right credentials through', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/api/logs/files',
      headers: { authorization: basicAuth() },
      remoteAddress: '10.9.9.9',
    });
    expect(res.statusCode).toBe(200);
  });

  it('requests without credentials are refused but never lock the client out', async () => {
    const ip = '10.200.0.9';
    for (let i = 0; i < 25; i++) {
      const res = await ctx.app.inject({ method: 'GET', url: '/api/logs/files', remoteAddress: ip });
      expect(res.statusCode, `anonymous request ${i + 1}`).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { authorization: basicAuth() },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('locks a client out after 10 failures in 15 minutes, for 30 minutes, and audits it', async () => {
    const ip = '10.200.0.1';
    const bad = { authorization: basicAuth(OPERATOR.user, 'wrong') };
    for (let i = 0; i < 10; i++) {
      clock.t += 60_000; // ten failures spread over ten minutes, all inside the window
      const res = await ctx.app.inject({ method: 'GET', url: '/api/config', headers: bad, remoteAddress: ip });
      expect(res.statusCode, `attempt ${i + 1}`).toBe(401);
    }
    const locked = await ctx.app.inject({
      method: 'GET',
      url: '/api/config',
      headers: { authorization: basicAuth() },
      remoteAddress: ip,
    });
    expect(locked.statusCode).toBe(429);
    expect(locked.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    expect(Number(locked.headers['retry-after'])).toBe(30 * 60);
    // Another client is unaffected, and so is the gateway's webhook from the locked address.
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { authorization: basicAuth() },
          remoteAddress: '10.200.0.2',
        })
      ).statusCode,
    ).toBe(200);
    const hook = await ctx.app.inject({
      method: 'POST',
      url: '/webhook/midtrans',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
      remoteAddress: ip,
    });
    expect(hook.statusCode).not.toBe(429);
    clock.t += 29 * 60_000;
    const still = await ctx.app.inject({
      method: 'GET',
      url: '/api/config',
      headers: { authorization: basicAuth() },
      remoteAddress: ip,
    });
    expect(still.statusCode).toBe(429);
    expect(Number(still.headers['retry-after'])).toBe(60);
    clock.t += 60_000;
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { authorization: basicAuth() },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(200);

    const lines = await ctx.lines();
    const action = (l: Record<string, unknown>) =>
      typeof l.audit === 'object' && l.audit !== null && 'action' in l.audit ? l.audit.action : undefined;
    const failures = lines.filter((l) => action(l) === 'auth_failed' && l.ip === ip);
    expect(failures).toHaveLength(10);
    expect(failures[0]).toMatchObject({
      audit: { actor: 'anonymous', action: 'auth_failed', subject: '/api/config', outcome: 'refused' },
      user: OPERATOR.user,
      scheme: 'basic',
    });
    expect(lines.filter((l) => action(l) === 'auth_lockout' && l.ip === ip)).toHaveLength(1);
    expect(lines.some((l) => action(l) === 'auth_locked_out' && l.ip === ip)).toBe(true);
  });

  it('forgets failures older than 15 minutes', async () => {
    const ip = '10.200.0.3';
    const bad = { authorization: basicAuth(OPERATOR.user, 'wrong') };
    for (let i = 0; i < 9; i++)
      await ctx.app.inject({ method: 'GET', url: '/metrics', headers: bad, remoteAddress: ip });
    clock.t += 16 * 60_000;
    for (let i = 0; i < 9; i++)
      expect(
        (await ctx.app.inject({ method: 'GET', url: '/metrics', headers: bad, remoteAddress: ip })).statusCode,
      ).toBe(401);
    expect(
      (
        await ctx.app.inject({
          method: 'GET',
          url: '/metrics',
          headers: { authorization: basicAuth() },
          remoteAddress: ip,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('never logs a user name that is not the operator (it may be a mistyped password)', async () => {
    await ctx.app.inject({
      method: 'GET',
      url: '/api/config',
      headers: { authorization: basicAuth('my-secret-typed-here', 'x') },
      remoteAddress: '10.200.0.9',
    });
    expect(await ctx.rawLogs()).not.toContain('my-secret-typed-here');
  });
});
