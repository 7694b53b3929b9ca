/**
 * The gateway's largest amount per payment method, the one place these limits are kept (Midtrans,
 * https://docs.midtrans.com/docs/is-there-a-minimum-and-maximum-transaction-value-that-i-can-charge-with-midtrans).
 * A method the documentation gives no maximum for is held to the largest maximum it gives for any
 * method (BCA VA, 20 billion rupiah): the gateway's amounts are bounded, and refusing beyond the
 * largest known bound costs nothing a real payment needs.
 */
import type { PaymentType } from './charge-methods.js';

/** The largest amount any payment method takes (the BCA VA maximum). */
export const GATEWAY_MAX_AMOUNT = 20_000_000_000;

// The methods added since 2025 (BSI, SeaBank, Saqu VA, OVO, DANA) have no documented maximum: they
// are held to the largest one, as any method without one.
const METHOD_MAX: Readonly<Record<string, number>> = {
  credit_card: 999_999_999,
  bca_va: 20_000_000_000,
  other_qris: 10_000_000,
  indomaret: 5_000_000,
  alfamart: 5_000_000,
};

/** The largest amount `method` (an `enabled_payments` name) takes. */
export function methodMaximum(method: string): number {
  if (method === 'cstore')
    return Math.max(METHOD_MAX.indomaret ?? GATEWAY_MAX_AMOUNT, METHOD_MAX.alfamart ?? GATEWAY_MAX_AMOUNT);
  return METHOD_MAX[method] ?? GATEWAY_MAX_AMOUNT;
}

/** The largest amount a page offering `methods` can take (an empty list offers every method). */
export function largestMaximum(methods: readonly string[]): number {
  return methods.length === 0 ? GATEWAY_MAX_AMOUNT : Math.max(...methods.map(methodMaximum));
}

/** The method a Core API charge uses, by its payment type and method object, as `enabled_payments` names it. */
export function chargeMethod(input: {
  payment_type: PaymentType;
  bank_transfer?: { bank: string };
  cstore?: { store: string };
}): string {
  switch (input.payment_type) {
    case 'bank_transfer':
      return input.bank_transfer ? `${input.bank_transfer.bank}_va` : 'bank_transfer';
    case 'cstore':
      return input.cstore?.store ?? 'cstore';
    case 'qris':
      return 'other_qris';
    default:
      return input.payment_type;
  }
}
