/** No answer of the service may be kept by a browser, proxy or CDN: each is one caller's data. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HTTPMethods } from 'fastify';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { E2E_SERVER_KEY } from '../helpers/e2e.js';
import { startSimulator, type RunningSimulator } from '../../simulator/index.js';

const KEY = 'cache-control-key-0123456789';
/** Shared, caller-independent bytes that may be cached privately (the renderer bundle). */
const CACHEABLE = new Set(['GET /docs/scalar.js']);

describe.each(DATABASE_KINDS)('Cache-Control: no-store on every answer (%s)', (kind) => {
  let simulator: RunningSimulator;
  let t: LoggedApp;
  beforeAll(async () => {
    simulator = await startSimulator({ serverKey: E2E_SERVER_KEY, logger: false, seed: 7 });
    t = await makeLoggedApp(
      kind,
      { API_KEYS: KEY, LOG_EXPOSE_API: 'true', MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: E2E_SERVER_KEY },
      { simulatorBaseUrl: simulator.baseUrl, runtimeConfigCacheMs: 0 },
    );
  });
  afterAll(async () => {
    await t.close();
    await simulator.close();
  });

  const headersFor = (auth: unknown) =>
    auth === 'op' || auth === 'doc'
      ? { authorization: basicAuth() }
      : auth === 'key'
        ? { authorization: `Bearer ${KEY}` }
        : {};

  it('the ERP-facing answers with data: link creation, the link, the payment status, a charge and a Snap token', async () => {
    const key = { authorization: `Bearer ${KEY}` };
    const answers = [
      await t.app.inject({
        method: 'POST',
        url: '/api/payment-links',
        headers: key,
        payload: { order_id: 'CC-1', nominal: 150000 },
      }),
      await t.app.inject({
        method: 'POST',
        url: '/createtransaksi',
        headers: key,
        payload: { mercant_id: 'CC-INV', item: [{ id: 'a', name: 'A', price: 1000, quantity: 2 }] },
      }),
      await t.app.inject({ method: 'GET', url: '/api/payment-links/CC-1', headers: key }),
      await t.app.inject({ method: 'GET', url: '/api/payments/CC-1/status', headers: key }),
      await t.app.inject({
        method: 'POST',
        url: '/api/charge',
        headers: key,
        payload: { order_id: 'CC-2', nominal: 10000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } },
      }),
      await t.app.inject({
        method: 'POST',
        url: '/api/snap/token',
        headers: key,
        payload: { order_id: 'CC-3', nominal: 10000 },
      }),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([201, 201, 200, 200, 201, 201]);
    for (const r of answers) expect(r.headers['cache-control'], r.body.slice(0, 200)).toBe('no-store');
  });

  it('the operator answers with data: config, logs, deliveries, transactions, the description, the docs and the console', async () => {
    for (const url of [
      '/api/config',
      '/api/logs',
      '/api/logs/files',
      '/api/deliveries',
      '/api/transactions',
      '/openapi.json',
      '/docs',
      '/metrics',
      '/console',
      '/console/config',
      '/console/transactions/CC-1',
    ]) {
      const r = await t.app.inject({ method: 'GET', url, headers: { authorization: basicAuth() } });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['cache-control'], url).toBe('no-store');
    }
  });

  it('every route, whatever it answers (errors, refusals and unknown paths included)', async () => {
    let checked = 0;
    for (const r of t.routes) {
      for (const method of (Array.isArray(r.method) ? r.method : [r.method]).filter(
        (m): m is HTTPMethods => m !== 'HEAD',
      )) {
        const url = r.url.replace(/:[A-Za-z_]+/g, 'x').replace(/\*$/, 'x');
        const withBody = method !== 'GET' && method !== 'OPTIONS';
        for (const headers of [headersFor(r.config?.auth), {}]) {
          const res = await t.app.inject({
            method,
            url,
            headers: { ...headers, ...(withBody ? { 'content-type': 'application/json' } : {}) },
            ...(withBody ? { payload: '{}' } : {}),
          });
          const name = `${method} ${r.url} → ${res.statusCode}`;
          if (CACHEABLE.has(`${method} ${r.url}`) && res.statusCode === 200)
            expect(res.headers['cache-control'], name).toBe('private, max-age=3600');
          else expect(res.headers['cache-control'], name).toBe('no-store');
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(60);
    for (const [method, url] of [
      ['GET', '/no-such-path'],
      ['PUT', '/api/config'],
      ['GET', '/api/payment-links/%E0%A4%A'],
    ] as const) {
      const res = await t.app.inject({ method, url, headers: { authorization: basicAuth() } });
      expect(res.headers['cache-control'], `${method} ${url} → ${res.statusCode}`).toBe('no-store');
    }
  });
});
