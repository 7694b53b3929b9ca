import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { signedNotification } from '../helpers/notifications.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { jsonDepthExceeds } from '../../src/http/plugins/json-body.js';

const op = { authorization: basicAuth() };
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('JSON nesting depth', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp('sqlite', { LOG_EXPOSE_API: 'true' }, { simulatorBaseUrl: 'http://127.0.0.1:9' });
  });
  afterAll(async () => ctx.close());
  const post = (url: string, payload: string, headers: Record<string, string> = {}) =>
    ctx.app.inject({
      method: 'POST',
      url,
      payload,
      headers: { 'content-type': 'application/json', ...op, ...headers },
    });

  it('the scanner counts brackets outside strings only', () => {
    expect(jsonDepthExceeds(nested(32), 32)).toBe(false);
    expect(jsonDepthExceeds(nested(33), 32)).toBe(true);
    expect(jsonDepthExceeds(`{"a":"${'['.repeat(100)}","b":"\\"[[["}`, 2)).toBe(false);
  });

  it('/echo: 20,000 levels → 400 problem+json, not a stack overflow; 32 levels are echoed', async () => {
    const deep = await post('/echo', nested(20_000));
    expect(deep.statusCode).toBe(400);
    expect(deep.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(deep.json()).toMatchObject({ code: 'INVALID_JSON', request_id: deep.headers['x-request-id'] });
    expect(deep.json().detail).toMatch(/deeper than 32/);
    const ok = await post('/echo', nested(32));
    expect(ok.statusCode).toBe(200);
    expect(JSON.stringify(ok.json().body)).toBe(nested(32));
  });

  it.each(['/api/payment-links', '/webhook/midtrans', '/api/config', '/api/charge'])(
    '%s refuses 33 levels before its handler',
    async (url) => {
      const res = await post(url, `{"order_id":"D-1","nominal":1000,"x":${nested(32)}}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('INVALID_JSON');
    },
  );

  it('prototype poisoning is still refused by the replaced parser', async () => {
    const res = await post('/echo', '{"__proto__":{"polluted":true}}');
    expect(res.statusCode).toBe(400);
  });
});

describe.each(DATABASE_KINDS)('NUL characters never reach the database (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    // Confirmation off, so what the notification itself says is what gets recorded and applied.
    await patchRuntimeConfig(ctx.services.runtimeConfig, { gateway: { confirm_notifications: false } });
  });
  afterAll(async () => ctx.close());

  it.each([
    ['GET', '/api/transactions?mercant_id=%00', 'querystring.mercant_id'],
    ['GET', '/api/transactions?order_id=a%00b', 'querystring.order_id'],
    ['GET', '/api/payment-links/A%00B', 'params.order_id'],
    ['GET', '/api/payments/A%00B/status', 'params.order_id'],
    ['GET', '/api/deliveries?order_id=%00', 'querystring.order_id'],
  ])('%s %s → 400 naming %s', async (method, url, path) => {
    const res = await ctx.app.inject({ method: method as 'GET', url, headers: op });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(res.json().errors).toContainEqual({ path, message: 'must not contain NUL (U+0000)' });
  });

  it.each([
    ['/api/payment-links', { order_id: 'N\u0000-1', nominal: 1000 }, 'order_id'],
    ['/createtransaksi', { mercant_id: 'M', item: [{ name: 'a\u0000', price: 1000, quantity: 1 }] }, 'item.0.name'],
    ['/api/snap/token', { order_id: 'S-1', nominal: 1000, customer: { first_name: '\u0000' } }, 'customer.first_name'],
    ['/api/config', { erp: { webhook_secret: 'abc\u0000def' } }, 'erp.webhook_secret'],
  ])('POST %s with a NUL in a field → 400', async (url, payload, path) => {
    const res = await ctx.app.inject({ method: 'POST', url, payload, headers: op });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({ path, message: 'must not contain NUL (U+0000)' });
  });

  const notificationRows = () => ctx.store.db.selectFrom('notifications').selectAll().orderBy('id').execute();

  it('a signed notification with a NUL in transaction_status: 200, recorded with U+FFFD, flagged, nothing applied', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'NUL-1', nominal: 150_000 });
    const n = signedNotification({
      order_id: 'NUL-1',
      transaction_status: 'settle\u0000ment',
      transaction_id: 'tx-nul-1',
    });
    const res = await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: n });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: 'unknown_status' });
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after?.status).toBe('pending');
    expect(after?.flags).toContain('nul_in_notification');
    const rec = (await notificationRows()).find((r) => r.gateway_order_id === 'NUL-1');
    expect(rec?.transaction_status).toBe('settle\uFFFDment');
    expect(JSON.parse(rec?.payload ?? '{}').transaction_status).toBe('settle\uFFFDment');
    expect((await ctx.services.store.outbox.list({})).items.filter((e) => e.orderId === 'NUL-1')).toHaveLength(0);
  });

  it('a signed settlement with a NUL in transaction_id: 200, applied, the id kept as received (U+FFFD), flagged', async () => {
    const tx = await seedTransaction(ctx.services.store, { orderId: 'NUL-2', nominal: 150_000 });
    const n = signedNotification({
      order_id: 'NUL-2',
      transaction_status: 'settlement',
      transaction_id: 'tx-\u0000-2',
    });
    const res = await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: n });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toBe('applied');
    const after = await ctx.services.store.transactions.findById(tx.id);
    expect(after).toMatchObject({ status: 'paid', gatewayTransactionId: 'tx-\uFFFD-2' });
    expect(after?.flags).toContain('nul_in_notification');
  });

  it('the operator replay takes the same path: 200, no 500', async () => {
    await seedTransaction(ctx.services.store, { orderId: 'NUL-3', nominal: 150_000 });
    const n = signedNotification({ order_id: 'NUL-3', transaction_status: '\u0000', transaction_id: '\u0000' });
    const res = await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans/replay', payload: n, headers: op });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toBe('unknown_status');
  });

  it('a NUL in a signed field (order_id) is a 400 before anything is recorded', async () => {
    const before = (await notificationRows()).length;
    const n = signedNotification({ order_id: 'NUL\u00004', transaction_status: 'settlement' });
    const res = await ctx.app.inject({ method: 'POST', url: '/webhook/midtrans', payload: n });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toContainEqual({ path: 'order_id', message: 'must not contain NUL (U+0000)' });
    expect(await notificationRows()).toHaveLength(before);
  });
});

describe.each(DATABASE_KINDS)(
  'order ids that could look like another: bidirectional and invisible characters refused at creation (%s)',
  (kind) => {
    let ctx: TestContext;
    beforeAll(async () => {
      ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    });
    afterAll(async () => ctx.close());

    // "INV-2026-01" as it would show, with the characters that make it so.
    const SPOOFS: Array<[string, string]> = [
      ['right-to-left override', 'INV-\u202e10-6202'],
      ['first-strong isolate', 'INV-2026\u2068-01'],
      ['right-to-left mark', 'INV-2026-01\u200f'],
      ['Arabic letter mark', 'INV\u061c-2026-01'],
      ['zero-width space', 'INV-2026\u200b-01'],
      ['zero-width joiner', 'INV-20\u200d26-01'],
      ['word joiner', 'INV-2026-0\u20601'],
      ['byte-order mark (zero-width no-break space)', 'INV-2026\ufeff-01'],
      ['soft hyphen', 'INV-2026\u00ad-01'],
      ['tag character', 'INV-2026-01\u{e0031}'],
    ];
    const routes = (id: string): Array<[string, Record<string, unknown>, string]> => [
      ['/api/payment-links', { order_id: id, nominal: 150000 }, 'order_id'],
      [
        '/createtransaksi',
        { order_id: id, mercant_id: 'INV', item: [{ id: 'a', name: 'A', price: 1000, quantity: 1 }] },
        'order_id',
      ],
      ['/createtransaksi', { mercant_id: id, item: [{ id: 'a', name: 'A', price: 1000, quantity: 1 }] }, 'mercant_id'],
      [
        '/api/charge',
        { order_id: id, nominal: 10000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } },
        'order_id',
      ],
      ['/api/snap/token', { order_id: id, nominal: 10000 }, 'order_id'],
    ];

    it.each(SPOOFS)(
      '%s: 400 ORDER_ID_INVALID on every creation route, with a plain message, nothing stored',
      async (_name, id) => {
        for (const [url, payload, field] of routes(id)) {
          const res = await ctx.app.inject({ method: 'POST', url, payload });
          expect(res.statusCode, `${url} ${field}`).toBe(400);
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
          const body = res.json();
          expect(body, `${url} ${field}`).toMatchObject({ code: 'ORDER_ID_INVALID', errors: [{ path: field }] });
          expect(body.detail).toMatch(
            new RegExp(
              `^${field} contains an invisible or text-direction character \\(U\\+[0-9A-F]{4,5} at character \\d+\\); such characters make one id look like another\\.$`,
            ),
          );
        }
        expect(await ctx.store.db.selectFrom('transactions').select('id').execute()).toEqual([]);
      },
    );
  },
);
