/**
 * One answer names every problem of a body: the schema's complaints and the order checks' (amounts,
 * items, customer, expiry, ids) together, so a caller fixes a body in one round trip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';

const KEY = 'all-problems-key-0123456789abcdef';
type Problem = { code: string; detail: string; errors: Array<{ path: string; message: string }> };

describe('every problem of a body in one answer', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { API_KEYS: KEY });
  });
  afterAll(async () => ctx.close());
  const post = async (url: string, payload: Record<string, unknown>) => {
    const res = await ctx.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${KEY}` }, payload });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    return res.json<Problem>();
  };
  const paths = (p: Problem) => p.errors.map((e) => e.path).sort();

  it('a direct-shape body missing order_id with a bad nominal and expire_at names all three', async () => {
    const p = await post('/api/payment-links', { nominal: 'abc', expire_at: 'yesterday' });
    expect(p.code).toBe('VALIDATION_FAILED');
    expect(paths(p)).toEqual(['expire_at', 'nominal', 'order_id']);
    expect(p.detail).toMatch(/^3 problems: /);
    for (const field of ['order_id', 'nominal', 'expire_at']) expect(p.detail).toContain(field);
  });

  it('with a valid order_id, the order checks name both fields; differing codes answer VALIDATION_FAILED', async () => {
    const p = await post('/api/payment-links', { order_id: 'ALL-1', nominal: 'abc', expire_at: 'yesterday' });
    expect(p.code).toBe('VALIDATION_FAILED');
    expect(p.errors).toEqual([
      { path: 'nominal', message: 'must be a whole number of rupiah' },
      { path: 'expire_at', message: expect.stringMatching(/ISO 8601/) },
    ]);
    expect(p.detail).toMatch(/^2 problems: nominal must be a whole number of rupiah; expire_at must be ISO 8601/);
  });

  it('problems of one kind keep their code; a single problem answers as before', async () => {
    const two = await post('/api/charge', {
      order_id: 'ALL-2',
      nominal: '12x',
      payment_type: 'qris',
      items: [{ name: 'A', price: 'lots', quantity: 1 }],
    });
    expect(two.code).toBe('AMOUNT_INVALID');
    expect(paths(two)).toEqual(['items[0].price', 'nominal']);
    const one = await post('/api/payment-links', { order_id: 'ALL-3', nominal: 'abc' });
    expect(one).toMatchObject({
      code: 'AMOUNT_INVALID',
      detail: 'nominal must be a whole number of rupiah.',
      errors: [{ path: 'nominal', message: 'must be a whole number of rupiah' }],
    });
  });

  it('the ERP shape names its item, customer and a past expiry together', async () => {
    const p = await post('/createtransaksi', {
      mercant_id: 'INV/ALL/1',
      item: [{ id: 'a', name: 'A', price: 1000, quantity: 0 }],
      customer: { email: 'not-an-address' },
      expire_at: '2020-01-01T00:00:00+07:00',
    });
    expect(p.code).toBe('VALIDATION_FAILED');
    expect(paths(p)).toEqual(['customer.email', 'expire_at', 'item[0].quantity']);
    expect(p.errors.find((e) => e.path === 'expire_at')?.message).toMatch(/future/);
  });

  it('an ERP body the schema refuses (no item) still names a bad expire_at and mercant_id', async () => {
    const p = await post('/createtransaksi', { mercant_id: 'INV\u202e1', expire_at: 'tomorrow-ish' });
    expect(paths(p)).toEqual(['expire_at', 'item', 'mercant_id']);
  });

  it('a Snap body with a bad nominal, customer and expiry names all three; nothing reached the gateway', async () => {
    const p = await post('/api/snap/token', {
      order_id: 'ALL-4',
      nominal: -5,
      customer: { email: 'nope' },
      expire_at: '2026-02-30 10:00:00',
    });
    expect(paths(p)).toEqual(['customer.email', 'expire_at', 'nominal']);
    expect(await ctx.store.transactions.findByOrderId('ALL-4')).toBeUndefined();
  });
});
