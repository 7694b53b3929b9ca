/**
 * The payment methods the gateway added in 2025–2026 in paylink's method table: BSI and SeaBank
 * virtual accounts charged through the Core API against the simulator (not refundable, as no VA is),
 * the new names accepted in enabled_payments, and their console words in both languages.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { paymentTypeWord } from '../../src/http/console/i18n/glossary.js';
import { enabledPaymentsProblem, refundableMethod } from '../../src/gateway/payment-methods.js';

const KEY = 'erp-key-methods-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

describe.each(DATABASE_KINDS)('the gateway methods of 2026 (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: KEY } });
  });
  afterEach(async () => e.close());

  const post = (url: string, payload: object) => e.app.inject({ method: 'POST', url, payload, headers: auth });

  it('a BSI and a SeaBank VA charge: the VA number of that bank, paid on the simulator, and refused a refund as every VA', async () => {
    for (const bank of ['bsi', 'seabank']) {
      const orderId = `VA-${bank}-1`;
      const res = await post('/api/charge', {
        order_id: orderId,
        nominal: 125_000,
        payment_type: 'bank_transfer',
        bank_transfer: { bank },
      });
      expect(res.statusCode, bank).toBe(201);
      expect(res.json()).toMatchObject({
        status: 'pending',
        payment_type: 'bank_transfer',
        va_numbers: [{ bank, va_number: expect.stringMatching(/^\d+$/) }],
      });
      const [charge] = (await e.sim.requests('/v2/charge')).filter(
        (r) => (r.body as { transaction_details?: { order_id?: string } }).transaction_details?.order_id === orderId,
      );
      expect(charge?.body).toMatchObject({ bank_transfer: { bank } });
      const gatewayOrderId = String(res.json<{ gateway_order_id: string }>().gateway_order_id);
      expect((await e.sim.post(`/_sim/transactions/${gatewayOrderId}/pay`)).status).toBe(200);
      const st = await e.app.inject({
        method: 'GET',
        url: `/api/payments/${encodeURIComponent(orderId)}/status`,
        headers: auth,
      });
      expect(st.json()).toMatchObject({ status: 'paid' });
      const refund = await post(`/api/payments/${encodeURIComponent(orderId)}/refund`, {});
      expect(refund.statusCode).toBe(422);
      expect(refund.json()).toMatchObject({ code: 'REFUND_NOT_SUPPORTED' });
    }
  });

  it('a bank the Core API does not take for a VA (Danamon: BI-SNAP only) is a 400 that never reaches the gateway', async () => {
    const res = await post('/api/charge', {
      order_id: 'VA-danamon-1',
      nominal: 125_000,
      payment_type: 'bank_transfer',
      bank_transfer: { bank: 'danamon' },
    });
    expect(res.statusCode).toBe(400);
    expect(await e.sim.requests('/v2/charge')).toHaveLength(0);
  });

  it('a Snap page offering only the new VAs is created, and the simulator page offers them', async () => {
    const res = await post('/api/snap/token', {
      order_id: 'SNAP-NEW-VA',
      nominal: 50_000,
      enabled_payments: ['seabank_va', 'saqu_va', 'bsi_va'],
    });
    expect(res.statusCode).toBe(201);
    const page = await fetch(String(res.json<{ redirect_url: string }>().redirect_url));
    const text = await page.text();
    expect(text).toContain('SeaBank Virtual Account');
    expect(text).toContain('Saqu Virtual Account');
    expect(text).toContain('BSI Virtual Account');
  });
});

describe('the method table', () => {
  it('knows the new enabled_payments names, keeps VAs unrefundable and OVO/DANA refundable, and words Google Pay in both languages', () => {
    for (const m of ['bsi_va', 'seabank_va', 'saqu_va', 'danamon_va', 'ovo', 'dana'])
      expect(enabledPaymentsProblem([m], 'enabled_payments'), m).toBeUndefined();
    expect(enabledPaymentsProblem(['google_pay'], 'enabled_payments')).toBeDefined();
    expect(refundableMethod('bank_transfer')).toBe(false);
    expect(refundableMethod('ovo')).toBe(true);
    expect(refundableMethod('dana')).toBe(true);
    expect(paymentTypeWord('en', 'google_pay')).toBe('Google Pay');
    expect(paymentTypeWord('id', 'google_pay')).toBe('Google Pay');
    expect(paymentTypeWord('id', 'ovo')).toBe('OVO');
  });
});
