/**
 * Reconciling a day from the gateway's BI-SNAP transaction history, against the simulator over
 * HTTP: a day with a legacy payment, a refunded one, a BI-SNAP VA payment, a pending one and 55
 * payments paylink never saw (two pages of history). The daily job's import has exactly the
 * results an upload of the same rows as a file has; the fee and net of matched rows are written
 * once; running again (job or API) is the first import; a refused token or a wrong HMAC secret
 * writes nothing.
 *
 * paylink's clock runs a day ahead of the simulator's, so the simulator's "today" is paylink's
 * "yesterday", the day the job reconciles.
 */
import { Readable } from 'node:stream';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';
import { formState } from '../helpers/console-forms.js';
import { createHistoryReconciler } from '../../src/workers/history-reconciler.js';
import { toJakartaIso } from '../../src/platform/time.js';

const KEY = 'erp-key-history-0123456789';
const DAY_MS = 86_400_000;
const op = { authorization: basicAuth() };
const auth = { authorization: `Bearer ${KEY}` };
const pair = () =>
  generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
const merchant = pair();
const stranger = pair();
const gatewayKeys = pair();
const CLIENT = { clientId: 'e2e-history-client', clientSecret: 'e2e-history-secret', partnerId: 'e2e-partner' };
/** The simulated gateway's fees, as its price list says: QRIS 0.7 %, a VA 4,000 flat. */
const qrisFee = (n: number) => Math.round(n * 0.007);
const VA_FEE = 4_000;

describe.each(DATABASE_KINDS)("reconciling a day from the gateway's transaction history (%s)", (kind) => {
  let e: E2EContext;
  /** The simulator's today (Jakarta): paylink's yesterday. */
  const day = toJakartaIso(new Date()).slice(0, 10);
  const known: Array<{
    orderId: string;
    gatewayOrderId: string;
    transactionId: string;
    status: string;
    amount: number;
    fee: number;
  }> = [];
  const strangers: Array<{ orderId: string; transactionId: string; amount: number }> = [];

  const config = async (snapBi: Record<string, unknown>) => {
    const res = await e.app.inject({
      method: 'POST',
      url: '/api/config',
      headers: { ...op, 'content-type': 'application/json' },
      payload: { gateway: { snap_bi: snapBi } },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const charge = async (payload: Record<string, unknown>) => {
    const res = await e.app.inject({ method: 'POST', url: '/api/charge', headers: auth, payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { gateway_order_id: string; transaction_id: string };
  };
  const payAndRefresh = async (orderId: string, gatewayOrderId: string) => {
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    const res = await e.app.inject({
      method: 'GET',
      url: `/api/payments/${encodeURIComponent(orderId)}/status`,
      headers: auth,
    });
    expect(res.json()).toMatchObject({ status: 'paid' });
  };
  const run = (body: Record<string, unknown> = { day }) =>
    e.app.inject({
      method: 'POST',
      url: '/api/reconciliation/history-runs',
      headers: { ...op, 'content-type': 'application/json' },
      payload: body,
    });
  const imports = async () =>
    (
      (await e.app.inject({ method: 'GET', url: '/api/reconciliation/imports', headers: op })).json() as {
        items: Array<Record<string, unknown>>;
      }
    ).items;
  const rowsOf = async (id: string) =>
    (
      (
        await e.app.inject({ method: 'GET', url: `/api/reconciliation/imports/${id}?limit=5000`, headers: op })
      ).json() as { items: Array<Record<string, unknown>> }
    ).items
      .map((r) =>
        JSON.stringify([
          r.result,
          r.gateway_order_id,
          r.order_id,
          r.report_status,
          r.report_amount,
          r.fee_amount,
          r.net_amount,
          r.paylink_status,
          r.paylink_amount,
          r.detail,
        ]),
      )
      .sort();

  beforeAll(async () => {
    e = await startE2E(kind, {
      env: {
        API_KEYS: KEY,
        MIDTRANS_SNAP_BI_CLIENT_ID: CLIENT.clientId,
        MIDTRANS_SNAP_BI_CLIENT_SECRET: CLIENT.clientSecret,
        MIDTRANS_SNAP_BI_PARTNER_ID: CLIENT.partnerId,
        MIDTRANS_SNAP_BI_CHANNEL_ID: '95221',
        MIDTRANS_SNAP_BI_PRIVATE_KEY: merchant.privateKey,
        MIDTRANS_SNAP_BI_PUBLIC_KEY: gatewayKeys.publicKey,
      },
      serviceOptions: { runtimeConfigCacheMs: 0, clock: { now: () => new Date(Date.now() + DAY_MS) } },
      simulator: {
        snapBi: { ...CLIENT, merchantPublicKey: merchant.publicKey, privateKey: gatewayKeys.privateKey },
      },
    });
    await config({ methods: ['bank_transfer'] });

    const paid = await charge({ order_id: 'H/PAID', nominal: 10_000, payment_type: 'qris' });
    await payAndRefresh('H/PAID', paid.gateway_order_id);
    known.push({ orderId: 'H/PAID', ...ids(paid), status: 'settlement', amount: 10_000, fee: qrisFee(10_000) });

    const refunded = await charge({ order_id: 'H/REF', nominal: 20_000, payment_type: 'qris' });
    await payAndRefresh('H/REF', refunded.gateway_order_id);
    const refund = await e.app.inject({ method: 'POST', url: '/api/payments/H%2FREF/refund', headers: auth });
    expect(refund.json()).toMatchObject({ status: 'refunded' });
    known.push({ orderId: 'H/REF', ...ids(refunded), status: 'refund', amount: 20_000, fee: qrisFee(20_000) });

    const va = await charge({
      order_id: 'H/VA',
      nominal: 75_000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'bca' },
    });
    await payAndRefresh('H/VA', va.gateway_order_id);
    known.push({ orderId: 'H/VA', ...ids(va), status: 'settlement', amount: 75_000, fee: VA_FEE });

    // Never paid: neither in the history nor missing from it.
    await charge({ order_id: 'H/PENDING', nominal: 30_000, payment_type: 'qris' });

    // Paid at the gateway by another system: unknown to paylink.
    for (let i = 0; i < 55; i++) {
      const orderId = `STRANGER-${String(i).padStart(2, '0')}`;
      const amount = 1_000 + i;
      const c = await e.sim.gateway('POST', '/v2/charge', {
        payment_type: 'qris',
        transaction_details: { order_id: orderId, gross_amount: amount },
      });
      expect(c.status).toBe(200);
      expect((await e.sim.post(`/_sim/transactions/${orderId}/pay`)).status).toBe(200);
      strangers.push({ orderId, transactionId: (c.body as { transaction_id: string }).transaction_id, amount });
    }
  }, 120_000);
  afterAll(async () => e.close());

  const ids = (c: { gateway_order_id: string; transaction_id: string }) => ({
    gatewayOrderId: c.gateway_order_id,
    transactionId: c.transaction_id,
  });

  it('a wrong HMAC secret or a refused token writes nothing', async () => {
    await config({ client_secret: 'not-the-gateway-secret' });
    const hmac = await run();
    expect(hmac.statusCode, hmac.body).toBe(502);
    expect(hmac.json()).toMatchObject({ code: 'GATEWAY_REFUSED', gateway: { status_code: '4011200' } });

    await config({ client_secret: CLIENT.clientSecret, private_key: stranger.privateKey });
    const token = await run();
    expect(token.statusCode, token.body).toBe(502);
    expect(token.json()).toMatchObject({ code: 'GATEWAY_REFUSED', gateway: { status_code: '4017300' } });

    await config({ private_key: merchant.privateKey });
    expect(await imports()).toEqual([]);
    for (const k of known)
      expect(await e.services.store.transactions.findByOrderId(k.orderId)).toMatchObject({
        feeAmount: null,
        netAmount: null,
      });
  });

  it('the daily job reconciles the day as an upload of the same rows would, once', async () => {
    const worker = createHistoryReconciler(e.services, { at: '00:00' });
    const first = await worker.runOnce();
    expect(first).toEqual({ day, reconciled: ['default'], failed: [] });

    const [job] = await imports();
    expect(job).toMatchObject({
      source: 'history_api',
      created_by: 'schedule',
      rows: 58,
      matched: 3,
      missing_here: 55,
      missing_at_gateway: 0,
      amount_mismatch: 0,
      status_mismatch: 0,
      transaction_mismatch: 0,
      covers_from: day,
      covers_to: day,
    });
    for (const k of known)
      expect(await e.services.store.transactions.findByOrderId(k.orderId)).toMatchObject({
        feeAmount: k.fee,
        netAmount: k.amount - k.fee,
      });
    const pending = await e.services.store.transactions.findByOrderId('H/PENDING');
    expect(pending).toMatchObject({ status: 'pending', feeAmount: null });

    // Again, by the job and from the API: the first import, nothing new written.
    const updatedAt = (await e.services.store.transactions.findByOrderId('H/PAID'))?.updatedAt;
    expect(await worker.runOnce()).toEqual({ day, reconciled: [], failed: [] });
    const again = await run();
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual(job);
    expect(await imports()).toHaveLength(1);
    expect((await e.services.store.transactions.findByOrderId('H/PAID'))?.updatedAt).toBe(updatedAt);

    // The same rows uploaded as a report of that day: the same results, row for row.
    const csv = [
      'Order ID,Transaction ID,Transaction Status,Amount,Fee',
      ...known.map((k) => `${k.gatewayOrderId},${k.transactionId},${k.status},${k.amount}.00,${k.fee}`),
      ...strangers.map((s) => `${s.orderId},${s.transactionId},settlement,${s.amount}.00,${qrisFee(s.amount)}`),
    ].join('\r\n');
    const upload = await e.app.inject({
      method: 'POST',
      url: `/api/reconciliation/imports?from=${day}&to=${day}`,
      headers: { ...op, 'content-type': 'text/csv' },
      payload: Readable.from([Buffer.from(csv)]),
    });
    expect(upload.statusCode, upload.body).toBe(201);
    const file = upload.json() as Record<string, unknown>;
    const counts = (i: Record<string, unknown>) => {
      const { id: _id, source: _s, file_sha256: _f, created_by: _c, created_at: _a, finished_at: _d, ...rest } = i;
      return rest;
    };
    expect(file.source).toBe('file');
    expect(counts(file)).toEqual(counts(job ?? {}));
    expect(await rowsOf(String(file.id))).toEqual(await rowsOf(String(job?.id)));
  });

  it("the console's form runs a day and the page shows where each import came from", async () => {
    const page = await e.app.inject({ url: '/console/reconciliation', headers: op });
    expect(page.body).toContain('Gateway history (BI-SNAP)');
    expect(page.body).toContain('action="/console/reconciliation/history"');
    const { token, cookie } = formState(page);
    const job = (await imports()).find((i) => i.source === 'history_api');
    const res = await e.app.inject({
      method: 'POST',
      url: '/console/reconciliation/history',
      headers: { ...op, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: token, day }).toString(),
    });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`/console/reconciliation/${String(job?.id)}?done=again`);
    const forged = await e.app.inject({
      method: 'POST',
      url: '/console/reconciliation/history',
      headers: { ...op, cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: 'forged-token', day }).toString(),
    });
    expect(forged.statusCode).toBe(403);
  });

  it('only finance or admin, for a past day', async () => {
    const future = await run({ day: toJakartaIso(new Date(Date.now() + DAY_MS)).slice(0, 10) });
    expect(future.statusCode).toBe(400);
    expect(future.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    const malformed = await run({ day: '2026-02-30' });
    expect(malformed.statusCode).toBe(400);
    // Without a day: yesterday (paylink's), the day already reconciled.
    const yesterday = await run({});
    expect(yesterday.statusCode, yesterday.body).toBe(200);
    expect(yesterday.json()).toMatchObject({ source: 'history_api', covers_from: day });
    const noBody = await e.app.inject({ method: 'POST', url: '/api/reconciliation/history-runs', headers: op });
    expect(noBody.statusCode).toBe(400);
    const viewer = { user: 'vera', pass: 'viewer-password-0001' };
    const made = await e.app.inject({
      method: 'POST',
      url: '/api/operators',
      headers: op,
      payload: { username: viewer.user, role: 'viewer', password: viewer.pass },
    });
    expect(made.statusCode, made.body).toBe(201);
    const refused = await e.app.inject({
      method: 'POST',
      url: '/api/reconciliation/history-runs',
      headers: { authorization: basicAuth(viewer.user, viewer.pass), 'content-type': 'application/json' },
      payload: { day },
    });
    expect(refused.statusCode).toBe(403);
  });
});
