/** The admins' operators page: add (the generated password on the answer only), change, disable and unlock; refused to others. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(DATABASE_KINDS)('console operators page (%s)', (kind) => {
  let t: TestContext;
  beforeAll(async () => {
    t = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => t.close());
  const admin = { authorization: basicAuth() };

  /** Posts a form of the operators page as the admin, with the page's CSRF token and cookie. */
  async function post(action: string, fields: Record<string, string>) {
    const shown = await t.app.inject({ url: '/console/operators', headers: admin });
    const { token, cookie } = formState(shown);
    return t.app.inject({
      method: 'POST',
      url: action,
      payload: new URLSearchParams({ _csrf: token, ...fields }).toString(),
      headers: { ...admin, cookie, ...FORM },
    });
  }
  const me = (user: string, pass: string, ip = '10.95.0.1') =>
    t.app.inject({ url: '/api/me', headers: { authorization: basicAuth(user, pass) }, remoteAddress: ip });

  it('an admin adds an operator; the generated password is on the answer only, and works', async () => {
    const first = await t.app.inject({ url: '/console/operators', headers: admin });
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('No operator signs in by name yet.');
    expect(first.body).toContain('href="/console/operators"');
    const res = await post('/console/operators', { username: 'sari', role: 'finance', password: '' });
    expect(res.statusCode).toBe(200);
    const password = /Password of sari, shown this once: ([A-Za-z0-9_-]+)/.exec(res.body)?.[1] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(12);
    expect(res.body).toContain('data-operator="sari"');
    expect((await me('sari', password)).json()).toMatchObject({ role: 'finance' });
    // The page shown again does not repeat it.
    expect((await t.app.inject({ url: '/console/operators', headers: admin })).body).not.toContain(password);
    const short = await post('/console/operators', { username: 'tono', role: 'viewer', password: 'too-short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('VALIDATION_FAILED');
    const taken = await post('/console/operators', { username: 'sari', role: 'viewer', password: '' });
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('An operator of that name exists already.');
  });

  it('sets a role, disables and enables, and lifts a lock', async () => {
    await post('/console/operators', { username: 'rudi', role: 'viewer', password: 'rudi-password-0001' });
    expect((await post('/console/operators/rudi', { role: 'admin' })).statusCode).toBe(200);
    expect((await me('rudi', 'rudi-password-0001')).json()).toMatchObject({ role: 'admin' });
    await post('/console/operators/rudi', { disabled: 'true' });
    expect((await me('rudi', 'rudi-password-0001')).statusCode).toBe(401);
    await post('/console/operators/rudi', { disabled: 'false' });
    expect((await me('rudi', 'rudi-password-0001')).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) await me('rudi', `wrong-${i}`, '10.95.0.5');
    expect((await me('rudi', 'rudi-password-0001', '10.95.0.5')).statusCode).toBe(429);
    const page = await t.app.inject({ url: '/console/operators', headers: admin });
    expect(page.body).toContain('locked until');
    expect(hiddenFields(page.body, '/console/operators/rudi/unlock')).toHaveProperty('_csrf');
    expect((await post('/console/operators/rudi/unlock', {})).statusCode).toBe(200);
    expect((await me('rudi', 'rudi-password-0001', '10.95.0.5')).statusCode).toBe(200);
  });

  it('is refused to a finance operator, whose menu does not show it', async () => {
    await post('/console/operators', { username: 'fani', role: 'finance', password: 'fani-password-0001' });
    const headers = { authorization: basicAuth('fani', 'fani-password-0001') };
    const refused = await t.app.inject({ url: '/console/operators', headers });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('Your role does not allow this.');
    const overview = await t.app.inject({ url: '/console', headers });
    expect(overview.body).not.toContain('href="/console/operators"');
  });
});
