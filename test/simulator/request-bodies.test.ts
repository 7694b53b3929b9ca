/**
 * The gateway request bodies paylink builds: every body the builders produce from normalized input
 * matches its schema, a body that does not is refused before any call, and the simulator accepts
 * each kind when paylink's own client sends it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import pino from 'pino';
import { Value } from 'typebox/value';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, s, start } from './helpers.js';
import { MidtransClient } from '../../src/gateway/midtrans/client.js';
import {
  PaymentLinkRequestSchema,
  RefundRequestSchema,
  SnapRequestSchema,
  paymentLinkBody,
  snapBody,
  storedPaymentLinkRequest,
  type RefundRequest,
} from '../../src/gateway/midtrans/requests.js';
import { ChargeRequestSchema, chargeBody } from '../../src/gateway/midtrans/charge-body.js';
import { PAYMENT_TYPES, methodObject, type ChargeMethods, type PaymentType } from '../../src/gateway/charge-methods.js';
import {
  CORE_CUSTOMER_LIMITS,
  LINK_CUSTOMER_LIMITS,
  itemsTotal,
  normalizeCustomer,
  normalizeItems,
} from '../../src/domain/orders/input.js';
import { resolveExpiry } from '../../src/domain/orders/expiry.js';
import { gatewayOrderIdFor } from '../../src/domain/orders/ids.js';
import { defaultRuntimeConfig } from '../../src/config/runtime.js';
import { loadConfig } from '../../src/config/env.js';

const NOW = new Date('2026-11-22T03:00:00.000Z');
const CLIENT_KEY = 'SB-Mid-client-request-bodies';

/** What the ERP may send for items and a customer (the route's schema allows these shapes). */
const itemInput = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 80, size: 'max' }), fc.integer()),
    name: fc.string({ minLength: 1, maxLength: 80, unit: 'grapheme', size: 'max' }).filter((n) => n.trim().length > 0),
    price: fc.integer({ min: -1_000, max: 1_000_000 }),
    quantity: fc.integer({ min: 1, max: 20 }),
  },
  { requiredKeys: ['name', 'price', 'quantity'] },
);
const customerInput = fc.record(
  {
    first_name: fc.string({ maxLength: 300, unit: 'grapheme', size: 'max' }),
    last_name: fc.string({ maxLength: 300, size: 'max' }),
    email: fc.constantFrom('a@b.co', 'someone.with.a.long.name@example.org', ' x@y.id '),
    phone: fc
      .tuple(fc.boolean(), fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 19, size: 'max' }))
      .map(([plus, digits]) => `${plus ? '+' : ''}${digits.join('')}`),
  },
  { requiredKeys: [] },
);
const orderId = fc.string({ minLength: 1, maxLength: 50 }).filter((id) => {
  try {
    gatewayOrderIdFor(id);
    return true;
  } catch {
    return false;
  }
});
const positiveItems = fc
  .array(itemInput, { minLength: 1, maxLength: 5 })
  .filter((items) => items.reduce((a, i) => a + i.price * i.quantity, 0) >= 1);

/** A valid charge request's method part for each payment type, as the route would accept it. */
const METHOD_INPUT: Record<PaymentType, ChargeMethods> = {
  bank_transfer: { bank_transfer: { bank: 'bni', va_number: '12345678' } },
  echannel: {},
  qris: { qris: { acquirer: 'gopay' } },
  gopay: {},
  shopeepay: { shopeepay: { callback_url: 'https://shop.example/back' } },
  cstore: { cstore: { store: 'indomaret', message: 'Thank you' } },
  credit_card: { credit_card: { token_id: 'replaced-by-a-real-token' } },
  cimb_clicks: {},
  uob_ezpay: {},
  akulaku: {},
  bri_epay: {},
  danamon_online: {},
  kredivo: {},
};

const items = normalizeItems([
  { id: 'SKU-1', name: 'Widget', price: 50_000, quantity: 2 },
  { name: 'Discount', price: -10_000, quantity: 1 },
]);
const customer = normalizeCustomer(
  { first_name: 'Siti', email: 'siti@example.co.id', phone: '+628123456789' },
  CORE_CUSTOMER_LIMITS,
);

function chargeFor(
  paymentType: PaymentType,
  gatewayOrderId: string,
  method: ChargeMethods = METHOD_INPUT[paymentType],
) {
  const withBasket = paymentType === 'akulaku' || paymentType === 'kredivo';
  const m = methodObject({
    order_id: gatewayOrderId,
    payment_type: paymentType,
    ...method,
    ...(withBasket ? { items, customer } : {}),
  });
  return chargeBody({
    gatewayOrderId,
    nominal: itemsTotal(items),
    paymentType,
    method: m,
    ...(withBasket ? { items, customer } : {}),
    expiry: resolveExpiry(undefined, new Date(), 120),
  });
}

describe('gateway request bodies match their schemas', () => {
  it('Payment Link: every body built from normalized input', () => {
    fc.assert(
      fc.property(
        orderId,
        positiveItems,
        fc.option(customerInput, { nil: undefined }),
        fc.array(fc.constantFrom('bca_va', 'gopay', 'other_qris'), { maxLength: 3 }),
        (id, itemInputs, c, enabled) => {
          const normalized = normalizeItems(itemInputs);
          const body = paymentLinkBody({
            gatewayOrderId: gatewayOrderIdFor(id),
            paymentLinkId: 'pl-0123456789abcdef0123456789abcdef',
            nominal: itemsTotal(normalized),
            items: normalized,
            customer: normalizeCustomer(c, LINK_CUSTOMER_LIMITS),
            expiry: resolveExpiry(undefined, NOW, 1440),
            enabledPayments: enabled,
          });
          expect([...Value.Errors(PaymentLinkRequestSchema, body)]).toEqual([]);
          // As stored at creation and read back for a retry.
          expect(storedPaymentLinkRequest(JSON.parse(JSON.stringify(body)))).toEqual(body);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('Snap: every body built from normalized input, with and without the optional parts', () => {
    fc.assert(
      fc.property(
        orderId,
        fc.option(positiveItems, { nil: undefined }),
        fc.option(customerInput, { nil: undefined }),
        fc.boolean(),
        (id, itemInputs, c, withExpiry) => {
          const normalized = itemInputs ? normalizeItems(itemInputs) : undefined;
          const body = snapBody({
            gatewayOrderId: gatewayOrderIdFor(id),
            nominal: normalized ? itemsTotal(normalized) : 10_000,
            items: normalized,
            customer: normalizeCustomer(c, CORE_CUSTOMER_LIMITS),
            expiry: withExpiry ? resolveExpiry('2026-11-23 10:00:00', NOW, 1440) : undefined,
            enabledPayments: ['bank_transfer'],
          });
          expect([...Value.Errors(SnapRequestSchema, body)]).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('Core charge: a body for every payment type; bill lines and the CIMB description are filled in', () => {
    for (const t of PAYMENT_TYPES)
      expect([...Value.Errors(ChargeRequestSchema, chargeFor(t, `ORDER-${t}`))], t).toEqual([]);
    expect(chargeFor('echannel', 'SO-1')).toMatchObject({ echannel: { bill_info1: 'Payment:', bill_info2: 'SO-1' } });
    expect(chargeFor('cimb_clicks', 'SO-2')).toMatchObject({ cimb_clicks: { description: 'Payment SO-2' } });
    expect(chargeFor('qris', 'SO-3', {})).toMatchObject({ payment_type: 'qris', qris: {} });
    expect(chargeFor('bri_epay', 'SO-4')).not.toHaveProperty('bri_epay');
  });

  it("a charge body whose method object is not its payment type's is refused before any call", () => {
    const bank = methodObject({ order_id: 'SO-5', payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' } });
    expect(() => chargeBody({ gatewayOrderId: 'SO-5', nominal: 10_000, paymentType: 'cstore', method: bank })).toThrow(
      /does not match the charge request schema/,
    );
    expect(() =>
      chargeBody({ gatewayOrderId: 'SO-5', nominal: 10_000, paymentType: 'bri_epay', method: bank }),
    ).toThrow(/does not match the charge request schema/);
  });

  it('a stored Payment Link body that is not one is refused, not sent', () => {
    const body = paymentLinkBody({
      gatewayOrderId: 'SO-6',
      paymentLinkId: 'pl-1',
      nominal: 90_000,
      items,
      expiry: resolveExpiry(undefined, NOW, 60),
      enabledPayments: [],
    });
    expect(() => storedPaymentLinkRequest({})).toThrow(/not a Payment Link create body/);
    expect(storedPaymentLinkRequest({ ...body, usage_limit: 5 }).usage_limit).toBe(5);
    expect(() => storedPaymentLinkRequest({ ...body, usage_limit: 1_000_001 })).toThrow(
      /not a Payment Link create body/,
    );
    expect(() => storedPaymentLinkRequest({ ...body, callbacks: { finish: 'https://evil.example' } })).toThrow(
      /not a Payment Link create body/,
    );
  });

  it('refund: with and without amount and reason', () => {
    for (const r of [
      { refund_key: 'rf-0123456789abcdef0123456789abcdef' },
      { refund_key: 'rf-1', amount: 5_000, reason: 'Item out of stock' },
    ] satisfies RefundRequest[]) {
      expect([...Value.Errors(RefundRequestSchema, r)]).toEqual([]);
    }
  });
});

describe("the simulator accepts each body from paylink's client", () => {
  let sim: RunningSimulator;
  let client: MidtransClient;
  beforeAll(async () => {
    sim = await start({ clientKey: CLIENT_KEY });
    const runtimeConfig = defaultRuntimeConfig(
      loadConfig({ MIDTRANS_MODE: 'simulator', MIDTRANS_SERVER_KEY: 'SB-Mid-server-test-key' }),
      sim.baseUrl,
    );
    client = new MidtransClient({
      runtimeConfig: async () => runtimeConfig,
      logger: pino({ level: 'silent' }),
      timeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await client.close();
    await sim.close();
  });

  it('Payment Link and Snap', async () => {
    const link = paymentLinkBody({
      gatewayOrderId: oid('PL'),
      paymentLinkId: `pl-${oid('x').toLowerCase()}`,
      nominal: itemsTotal(items),
      items,
      customer: normalizeCustomer({ first_name: 'Siti', phone: '08123' }, LINK_CUSTOMER_LIMITS),
      expiry: resolveExpiry(undefined, new Date(), 60),
      enabledPayments: ['bca_va', 'gopay'],
    });
    expect(await client.createPaymentLink(link)).toMatchObject({ order_id: link.transaction_details.order_id });
    const snap = snapBody({
      gatewayOrderId: oid('SNAP'),
      nominal: itemsTotal(items),
      items,
      customer,
      expiry: resolveExpiry(undefined, new Date(), 60),
      enabledPayments: ['bank_transfer', 'cstore'],
    });
    expect((await client.createSnapTransaction(snap)).token).toMatch(/.+/);
  });

  it('a Core charge of every payment type, then a refund of a paid one', async () => {
    const q = new URLSearchParams({
      client_key: CLIENT_KEY,
      card_number: '4811111111111114',
      card_exp_month: '12',
      card_exp_year: String(new Date().getUTCFullYear() + 1),
      card_cvv: '123',
    });
    const token = s((await call(sim.baseUrl, 'GET', `/v2/token?${q.toString()}`, { auth: false })).body.token_id);
    for (const t of PAYMENT_TYPES) {
      const method = t === 'credit_card' ? { credit_card: { token_id: token } } : METHOD_INPUT[t];
      const res = await client.charge(chargeFor(t, oid(t.slice(0, 6)), method));
      expect(res.payment_type, t).toBe(t);
    }
    const paid = oid('RF');
    await client.charge(chargeFor('qris', paid));
    expect((await call(sim.baseUrl, 'POST', `/_sim/transactions/${paid}/pay`)).status).toBe(200);
    const refund = await client.refund(paid, {
      refund_key: 'rf-0123456789abcdef0123456789abcdef',
      amount: 10_000,
      reason: 'Item out of stock',
    });
    expect(refund).toMatchObject({ status_code: '200', transaction_status: 'partial_refund' });
  });
});
