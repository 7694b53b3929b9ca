/**
 * Console sessions of operators who sign in by name: the sign-in page in both languages, the
 * cookie's attributes, roles that hide what they may not use (and are refused anyway), idle expiry,
 * and a sign-out or a disabling that ends a session on every instance over one database.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { appOver, basicAuth, makeTestApp, type AppInstance, type TestContext } from '../helpers/services.js';
import { formState } from '../helpers/console-forms.js';
import { seedTransaction } from '../helpers/seed.js';
import type { Clock } from '../../src/platform/clock.js';

class ManualClock implements Clock {
  constructor(public t = Date.parse('2026-11-22T03:00:00Z')) {}
  now() {
    return new Date(this.t);
  }
}

const VIEWER = { user: 'vera', pass: 'viewer-password-0001' };
const ADMIN2 = { user: 'adi', pass: 'admin-password-00002' };
const HTML = { accept: 'text/html,application/xhtml+xml' };

describe.each(DATABASE_KINDS)('console sessions (%s)', (kind) => {
  let t: TestContext;
  let other: AppInstance;
  const clock = new ManualClock();
  beforeAll(async () => {
    t = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', clock });
    // A second instance over the same database (its own app, services and store).
    const logger = pino({ level: 'silent' });
    other = await appOver(t.services.config, { logger, store: await t.db.open({ logger }) }, { clock });
    for (const [o, role] of [
      [VIEWER, 'viewer'],
      [ADMIN2, 'admin'],
    ] as const) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/operators',
        headers: { authorization: basicAuth() },
        payload: { username: o.user, role, password: o.pass },
      });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  const signIn = async (who: { user: string; pass: string }, extra: Record<string, string> = {}) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      payload: new URLSearchParams({ username: who.user, password: who.pass, ...extra }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: '10.90.0.1',
    });
    expect(res.statusCode, res.body).toBe(303);
    const set = String(res.headers['set-cookie']);
    return { res, set, cookie: set.split(';')[0] ?? '' };
  };

  it('a console page opened without credentials leads to the sign-in page, in either language', async () => {
    const open = await t.app.inject({ url: '/console/transactions?q=x', headers: HTML });
    expect(open.statusCode).toBe(303);
    expect(open.headers.location).toBe('/sign-in?next=%2Fconsole%2Ftransactions%3Fq%3Dx');
    // Not a browser page (no text/html): the Basic challenge, as before.
    expect((await t.app.inject({ url: '/console' })).headers['www-authenticate']).toMatch(/^Basic /);
    const en = await t.app.inject({ url: '/sign-in?next=%2Fconsole' });
    expect(en.statusCode).toBe(200);
    expect(en.headers['content-security-policy']).toMatch(/^default-src 'self';/);
    expect(en.body).toContain('<form method="post" action="/sign-in"');
    expect(en.body).toContain('autocomplete="current-password"');
    const id = await t.app.inject({ url: '/sign-in?lang=id' });
    expect(id.body).toContain('<html lang="id">');
    expect(id.body).toContain('Kata sandi');
  });

  it('signs in with a session cookie (HttpOnly, SameSite=Strict) and returns to the page asked for; a wrong password is the page again', async () => {
    const wrong = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      payload: new URLSearchParams({ username: VIEWER.user, password: 'not-the-password' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      remoteAddress: '10.90.0.2',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.headers['www-authenticate']).toBeUndefined();
    expect(wrong.body).toContain('Wrong user name or password.');
    const { res, set, cookie } = await signIn(VIEWER, { next: '/console/deliveries' });
    expect(res.headers.location).toBe('/console/deliveries');
    expect(set).toMatch(/^paylink_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
    const me = await t.app.inject({ url: '/api/me', headers: { cookie } });
    expect(me.json()).toEqual({ username: 'vera', role: 'viewer', accounts: null });
    const page = await t.app.inject({ url: '/console', headers: { cookie, ...HTML } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<strong>vera</strong> <span data-role="viewer">(viewer)</span>');
    expect(page.body).toContain('<form method="post" action="/sign-out"');
    // Another site's page is never a place to return to.
    expect((await signIn(VIEWER, { next: '//evil.example/console' })).res.headers.location).toBe('/console');
    // The store keeps the cookie's hash, never the cookie.
    const id = cookie.slice('paylink_session='.length);
    expect(await t.services.store.operators.findSession(id)).toBeUndefined();
  });

  it('a viewer sees no refund, retry or configuration controls, and the server refuses them anyway', async () => {
    await seedTransaction(t.services.store, { orderId: 'VW-1', status: 'paid', paymentType: 'qris' });
    const { cookie } = await signIn(VIEWER);
    const page = await t.app.inject({ url: '/console/transactions/VW-1', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain('/refund"');
    expect(page.body).toContain('action="/console/transactions/VW-1/check"');
    const config = await t.app.inject({ url: '/console/config', headers: { cookie } });
    expect(config.body).toContain('data-read-only');
    expect(config.body).not.toContain('Save configuration');
    // A token from a page the viewer may see, posted to the configuration: refused by the domain.
    const { token, cookie: csrfCookie } = formState(page);
    const post = await t.app.inject({
      method: 'POST',
      url: '/console/config',
      payload: new URLSearchParams({ _csrf: token, 'erp.timeout_ms': '4000' }).toString(),
      headers: { cookie: `${cookie}; ${csrfCookie}`, 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(post.statusCode).toBe(403);
    expect(post.body).toContain('FORBIDDEN');
    // The admin sees the forms.
    const admin = await signIn(ADMIN2);
    expect(
      (await t.app.inject({ url: '/console/transactions/VW-1', headers: { cookie: admin.cookie } })).body,
    ).toContain('action="/console/transactions/VW-1/refund"');
    expect((await t.app.inject({ url: '/console/config', headers: { cookie: admin.cookie } })).body).toContain(
      'Save configuration',
    );
  });

  it('sign-out ends the session at once on every instance', async () => {
    const { cookie } = await signIn(VIEWER);
    expect((await other.app.inject({ url: '/api/me', headers: { cookie } })).statusCode).toBe(200);
    const out = await other.app.inject({ method: 'POST', url: '/sign-out', headers: { cookie } });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/sign-in?ended=1');
    expect(String(out.headers['set-cookie'])).toMatch(
      /^paylink_session=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0$/,
    );
    for (const app of [t.app, other.app])
      expect((await app.inject({ url: '/api/me', headers: { cookie } })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/sign-in?ended=1' })).body).toContain('You are signed out.');
    // A sign-out from another site's page is refused.
    const second = await signIn(VIEWER);
    const forged = await t.app.inject({
      method: 'POST',
      url: '/sign-out',
      headers: { cookie: second.cookie, 'sec-fetch-site': 'cross-site' },
    });
    expect(forged.statusCode).toBe(403);
    expect((await t.app.inject({ url: '/api/me', headers: { cookie: second.cookie } })).statusCode).toBe(200);
  });

  it('disabling an operator on one instance ends their session on the other at once', async () => {
    const { cookie } = await signIn(VIEWER);
    expect((await t.app.inject({ url: '/api/me', headers: { cookie } })).statusCode).toBe(200);
    const off = await other.app.inject({
      method: 'PATCH',
      url: '/api/operators/vera',
      headers: { authorization: basicAuth() },
      payload: { disabled: true },
    });
    expect(off.statusCode).toBe(200);
    expect((await t.app.inject({ url: '/api/me', headers: { cookie } })).statusCode).toBe(401);
    await other.app.inject({
      method: 'PATCH',
      url: '/api/operators/vera',
      headers: { authorization: basicAuth() },
      payload: { disabled: false },
    });
    // Enabled again, the old session stays ended: the operator signs in anew.
    expect((await t.app.inject({ url: '/api/me', headers: { cookie } })).statusCode).toBe(401);
  });

  it('a session unused for 12 hours has ended; one in use carries on', async () => {
    const idle = await signIn(VIEWER);
    const busy = await signIn(VIEWER);
    clock.t += 11 * 3_600_000;
    expect((await t.app.inject({ url: '/api/me', headers: { cookie: busy.cookie } })).statusCode).toBe(200);
    clock.t += 3_600_000;
    expect((await t.app.inject({ url: '/api/me', headers: { cookie: idle.cookie } })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/api/me', headers: { cookie: busy.cookie } })).statusCode).toBe(200);
  });
});

describe('console session cookie behind HTTPS', () => {
  let t: TestContext;
  beforeAll(async () => {
    t = await makeTestApp(
      'sqlite',
      { PUBLIC_BASE_URL: 'https://pay.example.com' },
      { simulatorBaseUrl: 'http://127.0.0.1:9' },
    );
    await t.app.inject({
      method: 'POST',
      url: '/api/operators',
      headers: { authorization: basicAuth() },
      payload: { username: VIEWER.user, role: 'viewer', password: VIEWER.pass },
    });
  });
  afterAll(async () => t.close());

  it('is Secure', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/sign-in',
      payload: new URLSearchParams({ username: VIEWER.user, password: VIEWER.pass }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(303);
    expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
  });
});
