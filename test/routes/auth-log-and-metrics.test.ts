/**
 * A browser's first request to an operator page comes without credentials (it is answered with the
 * Basic prompt): that is not a failed login. And the metric names say each word once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { basicAuth, OPERATOR } from '../helpers/services.js';

describe('operator authentication lines and metric names', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { LOG_LEVEL: 'debug' });
  });
  afterAll(async () => ctx.close());

  it('a request without credentials is logged at debug, wrong credentials at warn', async () => {
    const ip = '10.77.0.1';
    const anonymous = await ctx.app.inject({ method: 'GET', url: '/console', remoteAddress: ip });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic /);
    let lines = (await ctx.lines()).filter((l) => l.ip === ip);
    expect(lines.filter((l) => l.msg === 'operator authentication failed')).toEqual([]);
    expect(lines.filter((l) => l.level === 'warn' || l.level === 40)).toEqual([]);
    expect(
      lines.some((l) => (l.level === 'debug' || l.level === 20) && String(l.msg).includes('without credentials')),
    ).toBe(true);

    const wrong = await ctx.app.inject({
      method: 'GET',
      url: '/console',
      headers: { authorization: basicAuth(OPERATOR.user, 'not-the-password') },
      remoteAddress: ip,
    });
    expect(wrong.statusCode).toBe(401);
    lines = (await ctx.lines()).filter((l) => l.ip === ip);
    const failed = lines.filter((l) => l.msg === 'operator authentication failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.level === 'warn' || failed[0]?.level === 40).toBe(true);
  });

  it('metric names carry the service prefix once (paylink_process_…, not paylink_process_process_…)', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: basicAuth() } });
    expect(res.statusCode).toBe(200);
    const names = [
      ...new Set(
        res.body
          .split('\n')
          .filter((l) => l.startsWith('# TYPE '))
          .map((l) => l.split(' ')[2] ?? ''),
      ),
    ];
    expect(names).toContain('paylink_process_cpu_user_seconds_total');
    expect(names).toContain('paylink_http_requests_total');
    for (const n of names) {
      expect(n.startsWith('paylink_'), n).toBe(true);
      const words = n.split('_');
      expect(
        words.some((w, i) => i > 0 && w === words[i - 1]),
        n,
      ).toBe(false);
    }
  });
});
