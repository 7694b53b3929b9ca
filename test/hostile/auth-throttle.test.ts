import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { appOver, basicAuth, makeTestApp, OPERATOR, type TestContext } from '../helpers/services.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import type { App } from '../../src/http/types.js';
import type { Store } from '../../src/storage/contract.js';

const KEY = 'erp-key-throttle-0123456789abcdef';
const wrongOp = { authorization: basicAuth(OPERATOR.user, 'wrong-password') };
const rightOp = { authorization: basicAuth() };

describe.each(DATABASE_KINDS)('wrong API keys are throttled per client (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, { API_KEYS: KEY }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());
  const status = (ip: string, headers: Record<string, string>) =>
    ctx.app.inject({ method: 'GET', url: '/api/payments/NONE-1/status', headers, remoteAddress: ip });

  it('50 wrong keys → 429 with Retry-After; the right key from the same address is never refused', async () => {
    const ip = '10.1.0.1';
    for (let i = 1; i < 50; i++)
      expect((await status(ip, { authorization: `Bearer wrong-${i}` })).statusCode, `attempt ${i}`).toBe(401);
    const locked = await status(ip, { 'x-api-key': 'wrong-50' });
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(locked.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS', request_id: locked.headers['x-request-id'] });
    expect(Number(locked.headers['retry-after'])).toBe(15 * 60);
    expect((await status(ip, { authorization: 'Bearer wrong-again' })).statusCode).toBe(429);
    // The right key is neither counted nor refused, and another client is unaffected.
    expect((await status(ip, { authorization: `Bearer ${KEY}` })).statusCode).toBe(404);
    expect((await status('10.1.0.2', { authorization: 'Bearer wrong' })).statusCode).toBe(401);
  });

  it('a client sending the right key costs no failure record, and no key at all is not a guess', async () => {
    for (let i = 0; i < 20; i++)
      expect((await status('10.1.0.9', { authorization: `Bearer ${KEY}` })).statusCode).toBe(404);
    for (let i = 0; i < 60; i++) expect((await status('10.1.0.10', {})).statusCode).toBe(401);
    expect(await ctx.services.store.authFailures.get('api_key', '10.1.0.9')).toBeUndefined();
    expect(await ctx.services.store.authFailures.get('api_key', '10.1.0.10')).toBeUndefined();
  });
});

/** A second instance over the same database (its own app, services and store). */
async function secondInstance(ctx: TestContext): Promise<{ app: App; store: Store; close(): Promise<void> }> {
  const logger = pino({ level: 'silent' });
  const store = await ctx.db.open({ logger });
  const { app, close } = await appOver(
    ctx.services.config,
    { logger, store },
    { simulatorBaseUrl: 'http://127.0.0.1:9' },
  );
  return { app, store, close };
}

describe.each(DATABASE_KINDS)(
  'operator lockout: counted in the database, by the client address TRUST_PROXY yields (%s)',
  (kind) => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await makeTestApp(kind, { TRUST_PROXY: '127.0.0.1' }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
    });
    afterAll(async () => ctx.close());
    const viaProxy = (app: App, client: string, headers: Record<string, string>) =>
      app.inject({
        method: 'GET',
        url: '/api/config',
        headers: { ...headers, 'x-forwarded-for': client },
        remoteAddress: '127.0.0.1',
      });

    it('behind the trusted proxy, one client locked out leaves the others in', async () => {
      for (let i = 0; i < 10; i++) expect((await viaProxy(ctx.app, '203.0.113.5', wrongOp)).statusCode).toBe(401);
      expect((await viaProxy(ctx.app, '203.0.113.5', rightOp)).statusCode).toBe(429);
      expect((await viaProxy(ctx.app, '203.0.113.6', rightOp)).statusCode).toBe(200);
      expect((await ctx.services.store.authFailures.get('operator', '203.0.113.5'))?.lockedUntil).not.toBeNull();
    });

    it('failures on two instances add up, and the lock holds on both', async () => {
      const other = await secondInstance(ctx);
      try {
        for (let i = 0; i < 5; i++) expect((await viaProxy(ctx.app, '198.51.100.7', wrongOp)).statusCode).toBe(401);
        for (let i = 0; i < 4; i++) expect((await viaProxy(other.app, '198.51.100.7', wrongOp)).statusCode).toBe(401);
        expect((await viaProxy(other.app, '198.51.100.7', wrongOp)).statusCode).toBe(401);
        expect((await viaProxy(ctx.app, '198.51.100.7', rightOp)).statusCode).toBe(429);
        expect((await viaProxy(other.app, '198.51.100.7', rightOp)).statusCode).toBe(429);
      } finally {
        await other.close();
      }
    });

    it('X-Forwarded-For from an untrusted address is ignored: changing it does not escape the count', async () => {
      for (let i = 0; i < 10; i++) {
        const res = await ctx.app.inject({
          method: 'GET',
          url: '/api/config',
          headers: { ...wrongOp, 'x-forwarded-for': `192.0.2.${i}` },
          remoteAddress: '10.7.7.7',
        });
        expect(res.statusCode).toBe(401);
      }
      expect(
        (
          await ctx.app.inject({
            method: 'GET',
            url: '/api/config',
            headers: { ...rightOp, 'x-forwarded-for': '192.0.2.99' },
            remoteAddress: '10.7.7.7',
          })
        ).statusCode,
      ).toBe(429);
    });
  },
);

describe('TRUST_PROXY', () => {
  it('takes addresses, CIDR ranges, the proxy-addr names, or a hop count; refuses anything else', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 172.16.0.0/12, loopback, ::1' }).trustProxy).toEqual([
      '10.0.0.1',
      '172.16.0.0/12',
      'loopback',
      '::1',
    ]);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({}).trustProxy).toBeUndefined();
    for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.example', '0'])
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(ConfigError);
  });
});
