import { describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { GatewayAnswerSchema } from '../../src/gateway/answer.js';
import { parseCoreResponse, parsePaymentLinkCreated } from '../../src/gateway/midtrans/wire.js';
import { PaymentLinkRequestSchema, storedPaymentLinkRequest } from '../../src/gateway/midtrans/requests.js';
import { chargeBody } from '../../src/gateway/midtrans/charge-body.js';
import { parseReport, reportFromStatus } from '../../src/gateway/report.js';
import { midtransSignature, signatureVerifies, verifyMidtransSignature } from '../../src/gateway/midtrans/signature.js';

const answer = {
  status_code: '200',
  status_message: 'Success, transaction is found',
  transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
  order_id: 'INV.1',
  gross_amount: '150000.00',
  transaction_status: 'settlement',
  fraud_status: 'accept',
  merchant_id: 'G123456789',
  va_numbers: [{ bank: 'bca', va_number: '123' }],
  refunds: [{ refund_key: 'k', refund_chargeback_id: 7 }],
};

describe("the gateway's answers as paylink reads them", () => {
  it('a Core answer is taken or refused exactly as the schema says, on every call', () => {
    const bodies: unknown[] = [
      answer,
      { status_code: '407' },
      {},
      null,
      [],
      'text',
      42,
      { ...answer, status_code: 200 },
      { ...answer, order_id: null },
      { ...answer, gross_amount: 150000 },
      { ...answer, status_message: 'x'.repeat(4097) },
      { ...answer, va_numbers: Array.from({ length: 21 }, () => ({})) },
      { ...answer, actions: [1] },
      { ...answer, refunds: [{ refund_chargeback_id: null }] },
    ];
    for (const body of bodies) {
      const want = Value.Check(GatewayAnswerSchema, body);
      // twice: the check compiled on first use answers the same afterwards
      expect(parseCoreResponse(body) !== undefined, JSON.stringify(body)?.slice(0, 80)).toBe(want);
      expect(parseCoreResponse(body) !== undefined).toBe(want);
    }
    expect(parseCoreResponse(answer)).toBe(answer);
    expect(() => parsePaymentLinkCreated({ order_id: 'L-1' })).toThrow(/unexpected payment link answer/);
    expect(parsePaymentLinkCreated({ order_id: 'L-1', payment_url: 'https://x' }).payment_url).toBe('https://x');
  });

  it('a stored Payment Link body and a charge body are taken or refused exactly as their schemas say', () => {
    const link = {
      transaction_details: { order_id: 'INV.1.1', gross_amount: 150000, payment_link_id: 'pl-0123456789abcdef' },
      usage_limit: 1,
      expiry: { start_time: '2026-11-27 10:00:00 +0700', duration: 1440, unit: 'minutes' },
      item_details: [{ id: 'a', name: 'Item', price: 150000, quantity: 1 }],
    };
    const bodies: unknown[] = [
      link,
      { ...link, usage_limit: 0 },
      { ...link, expiry: { ...link.expiry, start_time: '2026-11-27 10:00 +0700' } },
      { ...link, transaction_details: { ...link.transaction_details, gross_amount: '150000' } },
      { ...link, item_details: [] },
      { ...link, transaction_details: undefined },
      null,
      'text',
    ];
    for (const body of bodies) {
      const want = Value.Check(PaymentLinkRequestSchema, body);
      for (let i = 0; i < 2; i++) {
        if (want) expect(storedPaymentLinkRequest(body)).toBe(body);
        else
          expect(() => storedPaymentLinkRequest(body), JSON.stringify(body)?.slice(0, 80)).toThrow(
            /not a Payment Link/,
          );
      }
    }
    expect(bodies.filter((b) => Value.Check(PaymentLinkRequestSchema, b))).toEqual([link]);
    const charge = { gatewayOrderId: 'INV.2', nominal: 150000, paymentType: 'gopay' as const, method: {} };
    expect(chargeBody(charge).transaction_details).toEqual({ order_id: 'INV.2', gross_amount: 150000 });
    expect(() => chargeBody({ ...charge, nominal: -1 })).toThrow(/does not match the charge request schema/);
  });

  it("a status answer's report: its own fields in the stored order, the order id and amount asked about where it states none", () => {
    const report = reportFromStatus(
      { status_code: '200', transaction_status: 'pending', transaction_id: 'tx-1', order_id: undefined },
      { order_id: 'INV.1', gross_amount: '150000.00' },
    );
    expect(JSON.stringify(report)).toBe(
      JSON.stringify({
        order_id: 'INV.1',
        status_code: '200',
        gross_amount: '150000.00',
        transaction_status: 'pending',
        transaction_id: 'tx-1',
      }),
    );
    // A stated order id or amount is the answer's, even one the report cannot take (too long).
    const long = reportFromStatus(
      { status_code: '200', order_id: 'x'.repeat(513), gross_amount: '1.00' },
      { order_id: 'INV.1', gross_amount: '150000.00' },
    );
    expect(long).toEqual({ order_id: 'INV.1', status_code: '200', gross_amount: '150000.00' });
    expect(reportFromStatus({ ...answer }, { order_id: 'other', gross_amount: '1.00' }).order_id).toBe('INV.1');
  });

  it("a notification's report keeps NUL-marked fields, names them, and reads the amount before a fee", () => {
    const { report, replaced, missing } = parseReport({
      gross_amount: '150000.00',
      status_code: '200',
      order_id: 'INV.1',
      store: 'indo\u0000maret',
      extra_info: { gross_amount_info: { original_amount: 145000 } },
      fraud_status: null,
    });
    expect(missing).toEqual([]);
    expect(replaced).toEqual(['store']);
    expect(Object.keys(report ?? {})).toEqual(['order_id', 'status_code', 'gross_amount', 'store', 'original_amount']);
    expect(report?.store).toBe('indo\uFFFDmaret');
    expect(report?.original_amount).toBe('145000');
    expect(
      parseReport({
        order_id: 'INV.1',
        status_code: '200',
        gross_amount: '1',
        metadata: { extra_info: { gross_amount_info: { original_amount: '9.5' } } },
      }).report?.original_amount,
    ).toBe('9.5');
    expect(parseReport({ order_id: 'INV.1', status_code: '', gross_amount: '1' })).toEqual({
      missing: ['status_code'],
      replaced: [],
    });
  });

  it('a signature verifies in either case and only as the 128 hex digits of the SHA-512', () => {
    const key = 'SB-Mid-server-wire-test';
    const fields = { order_id: 'INV.1', status_code: '200', gross_amount: '150000.00' };
    const sig = midtransSignature(fields.order_id, fields.status_code, fields.gross_amount, key);
    expect(signatureVerifies(fields, sig, key)).toBe(true);
    expect(signatureVerifies(fields, sig.toUpperCase(), key)).toBe(true);
    expect(verifyMidtransSignature({ ...fields, signature_key: sig.toUpperCase() }, key)).toBe(true);
    for (const bad of [
      sig.slice(0, 127),
      `${sig}0`,
      `${sig.slice(0, 127)}g`,
      ` ${sig.slice(1)}`,
      '',
      '0'.repeat(128),
      `${sig.slice(0, 127)}\u212a`,
    ])
      expect(signatureVerifies(fields, bad, key), bad).toBe(false);
    expect(signatureVerifies({ ...fields, gross_amount: '150000' }, sig, key)).toBe(false);
    expect(signatureVerifies(fields, sig, `${key}x`)).toBe(false);
  });
});
