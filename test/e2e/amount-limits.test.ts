/**
 * Amounts against the gateway's per-method limits (one table, src/gateway/midtrans/amount-limits.ts): a
 * link above the largest limit of the enabled methods, a charge above its method's limit and a
 * number that cannot be held exactly are 400s that never reach the gateway.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const KEY = 'amount-limits-key-0123456789';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };

describe('amount limits', () => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E('sqlite', { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());
  // Raw JSON text, so numbers such as 1e20 reach the service as written.
  const post = (url: string, json: string) => e.app.inject({ method: 'POST', url, payload: json, headers: auth });
  const gatewayCalls = async () => (await e.sim.requests()).filter((r) => !r.path.startsWith('/_sim')).length;
  const detail = (res: { json(): unknown }) => JSON.stringify(res.json());

  it('a link above the largest limit of the enabled methods is refused, naming the limit, in both shapes', async () => {
    // Every method enabled: the largest limit is 20,000,000,000.
    let res = await post('/api/payment-links', '{"order_id":"BIG-1","nominal":20000000001}');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'AMOUNT_INVALID' });
    expect(detail(res)).toContain('20,000,000,000');
    const cfg = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
      payload: JSON.stringify({ links: { enabled_payments: ['indomaret', 'other_qris'] } }),
    });
    expect(cfg.statusCode).toBe(200);
    res = await post('/api/payment-links', '{"order_id":"BIG-2","nominal":10000001}');
    expect(res.statusCode).toBe(400);
    expect(detail(res)).toContain('10,000,000');
    res = await post(
      '/createtransaksi',
      '{"mercant_id":"BIG-3","item":[{"name":"Gold","price":5000001,"quantity":2}]}',
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'AMOUNT_INVALID' });
    expect(detail(res)).toContain('10,000,000');
    expect(await gatewayCalls()).toBe(0);
    // At the limit it goes through.
    expect((await post('/api/payment-links', '{"order_id":"BIG-4","nominal":10000000}')).statusCode).toBe(201);
    expect(await gatewayCalls()).toBeGreaterThan(0);
  });

  it("a charge above its method's limit is refused before the gateway is called", async () => {
    const cases: Array<[string, string]> = [
      ['"payment_type":"qris"', '10,000,000'],
      ['"payment_type":"cstore","cstore":{"store":"indomaret"}', '5,000,000'],
      ['"payment_type":"credit_card","credit_card":{"token_id":"tok-1"}', '999,999,999'],
    ];
    const amounts: Record<string, number> = {
      '10,000,000': 10_000_001,
      '5,000,000': 5_000_001,
      '999,999,999': 1_000_000_000,
    };
    let n = 0;
    for (const [method, limit] of cases) {
      const res = await post('/api/charge', `{"order_id":"CH-${++n}","nominal":${amounts[limit]},${method}}`);
      expect(res.statusCode, method).toBe(400);
      expect(res.json(), method).toMatchObject({ code: 'AMOUNT_INVALID' });
      expect(detail(res), method).toContain(limit);
    }
    expect(await gatewayCalls()).toBe(0);
    expect(
      (await post('/api/charge', '{"order_id":"CH-OK","nominal":10000000,"payment_type":"qris"}')).statusCode,
    ).toBe(201);
    expect(await gatewayCalls()).toBe(1);
  });

  it('a Snap token follows its own enabled_payments, else the configured ones', async () => {
    let res = await post('/api/snap/token', '{"order_id":"SN-1","nominal":10000001,"enabled_payments":["other_qris"]}');
    expect(res.statusCode).toBe(400);
    expect(detail(res)).toContain('10,000,000');
    res = await post('/api/snap/token', '{"order_id":"SN-2","nominal":20000000001}');
    expect(res.statusCode).toBe(400);
    expect(detail(res)).toContain('20,000,000,000');
    expect(await gatewayCalls()).toBe(0);
    expect(
      (await post('/api/snap/token', '{"order_id":"SN-3","nominal":10000001,"enabled_payments":["bca_va"]}'))
        .statusCode,
    ).toBe(201);
  });

  it('numbers that are not safe integers are "amount too large", on every shape', async () => {
    for (const big of ['1e20', '1000000000000000000000', '"1000000000000000000000"', '9007199254740993']) {
      for (const [url, json] of [
        ['/api/payment-links', `{"order_id":"HUGE-1","nominal":${big}}`],
        ['/api/charge', `{"order_id":"HUGE-2","nominal":${big},"payment_type":"qris"}`],
        ['/createtransaksi', `{"mercant_id":"HUGE-3","item":[{"name":"x","price":${big},"quantity":1}]}`],
      ] as const) {
        const res = await post(url, json);
        expect(res.statusCode, `${url} ${big}`).toBe(400);
        expect(detail(res), `${url} ${big}`).toContain('amount too large');
      }
    }
    expect(await gatewayCalls()).toBe(0);
  });
});
