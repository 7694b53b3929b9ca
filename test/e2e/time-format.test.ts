/**
 * One time format in every answer: ISO 8601 in Jakarta time with its offset (+07:00), whether the
 * time was stored by paylink (UTC) or written by the gateway (zone-less WIB).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const KEY = 'time-format-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+07:00$/;
const TIME_FIELD = /(_at|_time)$/;

/** Every time-named field in a JSON answer, with its path. */
function timeFields(v: unknown, at = '', out: Array<[string, unknown]> = []): Array<[string, unknown]> {
  if (Array.isArray(v)) v.forEach((x, i) => timeFields(x, `${at}[${i}]`, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (TIME_FIELD.test(k) && x !== null) out.push([`${at}.${k}`, x]);
      else timeFields(x, `${at}.${k}`, out);
    }
  }
  return out;
}

describe('time format', () => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E('sqlite', { listen: true, env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());

  it('link, charge, status, transaction and delivery answers write every time as ISO 8601 with +07:00', async () => {
    const answers: Array<[string, unknown]> = [];
    const call = async (
      name: string,
      method: 'GET' | 'POST',
      url: string,
      payload?: unknown,
      headers: Record<string, string> = auth,
    ) => {
      const res = await e.app.inject({ method, url, payload: payload as object | undefined, headers });
      expect(res.statusCode, `${name}: ${res.body}`).toBeLessThan(300);
      answers.push([name, res.json()]);
      return res.json();
    };
    const link = await call('direct link', 'POST', '/api/payment-links', {
      order_id: 'T-1',
      nominal: 50000,
      expire_at: '2026-12-30 10:00:00',
    });
    await call('ERP link', 'POST', '/createtransaksi', {
      mercant_id: 'T-2',
      item: [{ name: 'Tea', price: 25000, quantity: 1 }],
    });
    await call('charge', 'POST', '/api/charge', {
      order_id: 'T-3',
      nominal: 10000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
    });
    expect((await e.sim.post(`/_sim/transactions/${link.gateway_order_id as string}/pay`)).status).toBe(200);
    await expect
      .poll(
        async () =>
          (await e.app.inject({ method: 'GET', url: '/api/payment-links/T-1', headers: auth })).json().settlement_time,
        { timeout: 10_000 },
      )
      .not.toBeNull();
    await call('link after payment', 'GET', '/api/payment-links/T-1');
    await call('status', 'GET', '/api/payments/T-1/status');
    await call('charge status', 'GET', '/api/payments/T-3/status');
    await call('transactions', 'GET', '/api/transactions', undefined, { authorization: basicAuth() });
    await call('deliveries', 'GET', '/api/deliveries', undefined, { authorization: basicAuth() });
    const fields = answers.flatMap(([name, body]) => timeFields(body).map(([p, v]) => [`${name}${p}`, v] as const));
    // The answers carry times from both sources: stored instants and the gateway's own.
    for (const name of [
      'direct link.expire_at',
      'direct link.created_at',
      'charge.expiry_time',
      'link after payment.settlement_time',
      'status.updated_at',
    ])
      expect(fields.map(([p]) => p)).toContain(name);
    expect(fields.filter(([p]) => p.startsWith('transactions.items')).length).toBeGreaterThan(5);
    for (const [p, v] of fields) expect(v, p).toMatch(TIME);
    expect(link.expire_at).toBe('2026-12-30T10:00:00+07:00');
  });
});
