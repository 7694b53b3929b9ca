import { describe, expect, it } from 'vitest';
import { answerFor, confirmNotification, notAbout } from '../../src/domain/reports/trust.js';
import type { TransactionRecord } from '../../src/model/payment.js';

const signed = {
  order_id: 'INV.1',
  status_code: '200',
  gross_amount: '150000.00',
  transaction_status: 'settlement',
  transaction_id: 'forged-tx',
};
const tx = (over: Partial<TransactionRecord> = {}) =>
  ({ gatewayOrderId: 'INV.1', kind: 'charge', nominal: 150000, ...over }) as TransactionRecord;

describe('which gateway answers may be applied', () => {
  it('an answer naming the order (or naming it as its transaction id) is about it; another order, or none, is not', () => {
    expect(notAbout({ order_id: 'INV.1' }, 'INV.1')).toBeUndefined();
    expect(notAbout({ order_id: 'REAL-ORDER', transaction_id: 'INV.1' }, 'INV.1')).toBeUndefined();
    expect(notAbout({ order_id: 'INV.2', transaction_id: 'tx-2' }, 'INV.1')).toMatch(/another order \(INV\.2\)/);
    expect(notAbout({ transaction_id: 'tx-2' }, 'INV.1')).toMatch(/names no order/);
    expect(notAbout({}, 'INV.1')).toMatch(/names no order/);
  });

  it("a link's purchases are the link's; another link's, or a prefix that is no purchase, are not", () => {
    expect(notAbout({ order_id: 'LINK-7-1700000000000' }, 'LINK-7', { link: true })).toBeUndefined();
    expect(notAbout({ order_id: 'LINK-7-1700000000000' }, 'LINK-7')).toMatch(/another order/);
    expect(notAbout({ order_id: 'LINK-70-1700000000000' }, 'LINK-7', { link: true })).toMatch(/another order/);
    expect(notAbout({ order_id: 'LINK-7-' }, 'LINK-7', { link: true })).toMatch(/another order/);
  });

  it("a notification is confirmed only by an answer about its signed order and amount; the answer's facts are what is applied", () => {
    const ok = confirmNotification(
      {
        status_code: '201',
        order_id: 'INV.1',
        gross_amount: '150000.00',
        transaction_status: 'pending',
        transaction_id: 'real-tx',
      },
      signed,
    );
    expect(ok).toMatchObject({
      ok: true,
      report: {
        order_id: 'INV.1',
        gross_amount: '150000.00',
        transaction_status: 'pending',
        transaction_id: 'real-tx',
      },
    });
    expect(
      confirmNotification(
        { status_code: '200', order_id: 'INV.2', gross_amount: '150000.00', transaction_status: 'settlement' },
        signed,
      ),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/another order/) });
    expect(
      confirmNotification(
        { status_code: '200', order_id: 'INV.1', gross_amount: '1000.00', transaction_status: 'settlement' },
        signed,
      ),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/another amount \(1000\.00\)/) });
    // The same amount spelled differently is the same amount.
    expect(
      confirmNotification(
        { status_code: '200', order_id: 'INV.1', gross_amount: '150000', transaction_status: 'settlement' },
        signed,
      ).ok,
    ).toBe(true);
    // An answer without an amount takes the signed one.
    expect(
      confirmNotification({ status_code: '200', order_id: 'INV.1', transaction_status: 'settlement' }, signed),
    ).toMatchObject({ ok: true, report: { gross_amount: '150000.00' } });
  });

  it("paylink's own question about a payment is answered only by an answer about that payment", () => {
    expect(answerFor({ status_code: '200', order_id: 'INV.1', transaction_status: 'settlement' }, tx())).toMatchObject({
      ok: true,
      report: { order_id: 'INV.1', gross_amount: '150000.00' },
    });
    expect(answerFor({ status_code: '200', order_id: 'INV.9', transaction_status: 'settlement' }, tx())).toMatchObject({
      ok: false,
    });
    expect(
      answerFor(
        { status_code: '200', order_id: 'INV.1-1700000000000', transaction_status: 'settlement' },
        tx({ kind: 'payment_link' }),
      ),
    ).toMatchObject({ ok: true, report: { order_id: 'INV.1-1700000000000' } });
    expect(
      answerFor({ status_code: '200', order_id: 'INV.1-1700000000000', transaction_status: 'settlement' }, tx()),
    ).toMatchObject({ ok: false });
  });

  it("a purchase on an open-amount link is confirmed only at an amount the answer states, within the link's bounds", () => {
    const bounds = { min: 10000, max: 30000 };
    const purchase = { ...signed, order_id: 'OPEN.1-1764203456789', gross_amount: '15000.00' };
    const answer = (gross?: string) => ({
      status_code: '200',
      order_id: 'OPEN.1-1764203456789',
      transaction_status: 'settlement',
      ...(gross === undefined ? {} : { gross_amount: gross }),
    });
    expect(confirmNotification(answer('15000.00'), purchase, bounds)).toMatchObject({
      ok: true,
      report: { gross_amount: '15000.00' },
    });
    for (const gross of ['10000.00', '30000.00'])
      expect(confirmNotification(answer(gross), { ...purchase, gross_amount: gross }, bounds).ok, gross).toBe(true);
    for (const gross of ['9999.00', '30001.00', '5000000.00'])
      expect(confirmNotification(answer(gross), { ...purchase, gross_amount: gross }, bounds)).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/outside the open-amount link's bounds 10000–30000/),
      });
    expect(confirmNotification(answer(), purchase, bounds)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/states no amount/),
    });
    // Without bounds (a fixed link) an answer stating no amount keeps the signed one, as before.
    expect(confirmNotification(answer(), purchase).ok).toBe(true);
  });
});
