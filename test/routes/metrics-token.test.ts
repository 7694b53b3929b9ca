/**
 * METRICS_TOKEN: a scraper presents `Authorization: Bearer <token>` on /metrics, needs no operator
 * password, and neither counts toward nor is refused by the operators' sign-in lockout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { basicAuth, OPERATOR } from '../helpers/services.js';

const TOKEN = 'metrics-scrape-token-7d1f0c2a9b';
const WRONG = 'metrics-wrong-token-canary-5e3b';

describe('GET /metrics with METRICS_TOKEN', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { METRICS_TOKEN: TOKEN });
  });
  afterAll(async () => ctx.close());

  const scrape = (authorization: string | undefined, ip: string) =>
    ctx.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: authorization === undefined ? {} : { authorization },
      remoteAddress: ip,
    });

  it('with the operators locked out, the token still scrapes; a wrong token is 401 and never logged', async () => {
    const ip = '10.88.0.7';
    for (let i = 0; i < 10; i++) {
      const res = await scrape(basicAuth(OPERATOR.user, `wrong-password-${i}`), ip);
      expect(res.statusCode).toBe(401);
    }
    expect((await scrape(basicAuth(), ip)).statusCode).toBe(429);
    const operatorRow = () =>
      ctx.store.db
        .selectFrom('auth_failures')
        .selectAll()
        .where('scope', '=', 'operator')
        .where('client', '=', ip)
        .executeTakeFirst();
    const before = await operatorRow();
    expect(before?.locked_until).toBeTruthy();

    for (let i = 0; i < 3; i++) {
      const ok = await scrape(`Bearer ${TOKEN}`, ip);
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('paylink_http_requests_total');
    }
    const lower = await scrape(`bearer ${TOKEN}`, ip);
    expect(lower.statusCode).toBe(200);

    const wrong = await scrape(`Bearer ${WRONG}`, ip);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(wrong.body).not.toContain(WRONG);
    // A token is only for /metrics: elsewhere a Bearer is no operator credential.
    const elsewhere = await ctx.app.inject({
      method: 'GET',
      url: '/api/config',
      headers: { authorization: `Bearer ${TOKEN}` },
      remoteAddress: '10.88.0.8',
    });
    expect(elsewhere.statusCode).toBe(401);

    const logs = await ctx.rawLogs();
    expect(logs).not.toContain(WRONG);
    expect(logs).not.toContain(TOKEN);
    const lines = await ctx.lines();
    const refused = lines.filter((l) => l.msg === 'metrics token authentication failed');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ ip });
    // Neither the scrapes nor the wrong token touched the operators' record for this address.
    expect(await operatorRow()).toEqual(before);
    expect((await scrape(basicAuth(), ip)).statusCode).toBe(429);
  });

  it('without a token, operator credentials still work and a Bearer is a failed operator login', async () => {
    const ip = '10.88.1.1';
    expect((await scrape(basicAuth(), ip)).statusCode).toBe(200);
    expect((await scrape(undefined, ip)).statusCode).toBe(401);
  });
});

describe('GET /metrics without METRICS_TOKEN', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite');
  });
  afterAll(async () => ctx.close());

  it('a Bearer credential is refused like any wrong operator credential', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
      remoteAddress: '10.88.2.1',
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Basic /);
  });
});
