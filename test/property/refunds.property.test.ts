/**
 * Refunds as a writer of money facts, over real HTTP against the gateway simulator: for any
 * interleaving of refund requests on one paid payment — some sent again with the same
 * Idempotency-Key (the API's and the console's one-time key take the same path), some at once,
 * some one after another — each Idempotency-Key makes at most one refund at the gateway, under one
 * refund_key; every 200 is a refund the gateway holds; the gateway is never asked for more than the
 * payment; and what paylink records (its refunds and the payment's refunded amount) is what the
 * gateway holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';

const KEY = 'erp-key-refund-property-0123456789';
const auth = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const NOMINAL = 100_000;

/** A request: which of the run's keys it carries (none: a new refund each time), in which wave it is sent. */
const submit = fc.record({ key: fc.option(fc.nat({ max: 3 }), { nil: undefined }), wave: fc.nat({ max: 2 }) });
const plan = fc.record({
  /** The amount each key asks for (a key is always sent with the same body). */
  amounts: fc.array(fc.integer({ min: 1, max: 60_000 }), { minLength: 4, maxLength: 4 }),
  keyless: fc.integer({ min: 1, max: 60_000 }),
  submits: fc.array(submit, { minLength: 1, maxLength: 8 }),
});

describe.each(DATABASE_KINDS)('refunds under any interleaving, property (%s)', (kind) => {
  let e: E2EContext;
  beforeAll(async () => {
    e = await startE2E(kind, { listen: true, env: { API_KEYS: KEY }, serviceOptions: { runtimeConfigCacheMs: 0 } });
  });
  afterAll(async () => e.close());
  let run = 0;

  async function paidCharge(orderId: string): Promise<{ id: string; gatewayOrderId: string }> {
    const res = await fetch(`${e.url}/api/charge`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ order_id: orderId, nominal: NOMINAL, payment_type: 'qris' }),
    });
    expect(res.status).toBe(201);
    const gatewayOrderId = String(((await res.json()) as { gateway_order_id: string }).gateway_order_id);
    expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
    await expect
      .poll(async () => (await e.services.store.transactions.findByOrderId(orderId))?.status, { timeout: 5_000 })
      .toBe('paid');
    const t = await e.services.store.transactions.findByOrderId(orderId);
    return { id: t?.id ?? '', gatewayOrderId };
  }

  it('each Idempotency-Key refunds at most once, every 200 is held by the gateway, never more than the payment', async () => {
    await fc.assert(
      fc.asyncProperty(plan, async (p) => {
        run++;
        const orderId = `PROP-REFUND-${run}`;
        const { id, gatewayOrderId } = await paidCharge(orderId);
        const answers: Array<{ key: string | undefined; status: number; code?: string }> = [];
        for (const wave of [0, 1, 2]) {
          const sent = p.submits.filter((s) => s.wave === wave);
          const got = await Promise.all(
            sent.map(async (s) => {
              const key = s.key === undefined ? undefined : `${orderId}-k${s.key}`;
              const amount = s.key === undefined ? p.keyless : (p.amounts[s.key] ?? 1);
              const res = await fetch(`${e.url}/api/payments/${encodeURIComponent(orderId)}/refund`, {
                method: 'POST',
                headers: { ...auth, ...(key ? { 'idempotency-key': key } : {}) },
                body: JSON.stringify({ amount, reason: `property ${run}` }),
              });
              return { key, status: res.status, code: ((await res.json()) as { code?: string }).code };
            }),
          );
          answers.push(...got);
        }
        // Only the answers a refund may have: made, not enough left, another refund or the same key in flight, closed.
        for (const a of answers)
          expect(
            a.status === 200 ||
              (a.status === 400 && a.code === 'AMOUNT_INVALID') ||
              (a.status === 409 &&
                ['REFUND_IN_PROGRESS', 'IDEMPOTENCY_IN_FLIGHT', 'PAYMENT_CLOSED'].includes(a.code ?? '')),
            JSON.stringify(a),
          ).toBe(true);

        const st = (await e.sim.gateway('GET', `/v2/${gatewayOrderId}/status`)).body as {
          refunds?: Array<{ refund_key: string; refund_amount: string }>;
        };
        const held = st.refunds ?? [];
        const heldTotal = held.reduce((s, r) => s + Number(r.refund_amount), 0);
        expect(heldTotal).toBeLessThanOrEqual(NOMINAL);
        // Every refund_key the gateway was sent is one request's: one key, one refund.
        const sentKeys = (await e.sim.requests('/refund'))
          .filter((r) => r.path.includes(gatewayOrderId))
          .map((r) => (r.body as { refund_key: string }).refund_key);
        const kept = await e.services.store.refunds.listFor(id);
        for (const k of new Set(sentKeys)) expect(kept.filter((r) => r.refundKey === k)).toHaveLength(1);
        // An Idempotency-Key is one refund request, whatever the interleaving.
        for (const key of new Set(answers.map((a) => a.key).filter((k) => k !== undefined)))
          expect(kept.filter((r) => r.requestKey === key).length).toBeLessThanOrEqual(1);
        // Every 200 is a refund the gateway holds: keyed 200s share their key's refund.
        const keyedOk = new Set(answers.filter((a) => a.status === 200 && a.key).map((a) => a.key));
        const keylessOk = answers.filter((a) => a.status === 200 && !a.key).length;
        expect(held).toHaveLength(keyedOk.size + keylessOk);
        // What paylink records is what the gateway holds.
        const approved = kept.filter((r) => r.state === 'approved');
        expect(approved.map((r) => r.refundKey).sort()).toEqual(held.map((r) => r.refund_key).sort());
        expect((await e.services.store.transactions.findById(id))?.refundedAmount).toBe(heldTotal);
      }),
      { numRuns: 20 },
    );
    expect(run).toBe(20);
  }, 120_000);
});
