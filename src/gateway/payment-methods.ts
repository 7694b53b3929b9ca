/**
 * The payment methods the gateway documents for `enabled_payments` (Payment Link and Snap:
 * https://docs.midtrans.com/reference/create-payment-link,
 * https://docs.midtrans.com/reference/request-body-json-parameter), with the aliases `bank_transfer`
 * and `cstore`. The gateway skips names it does not offer and refuses a list that names none it
 * does; paylink refuses that list first (400).
 *
 * The methods added since 2025 (Midtrans changelog of 2025-10-22; the Snap reference of 2026 lists
 * BSI, SeaBank, Danamon and Saqu virtual accounts, OVO, DANA and Google Pay as channels): `bsi_va`
 * and `danamon_va` are in the Payment Link reference's list; `seabank_va` follows the bank name the
 * VA-number object documents (`seabank`, 1-19 digits); `saqu_va`, `ovo` and `dana` follow the
 * pattern of the others and are UNCONFIRMED (their enabled_payments strings were not read); Google
 * Pay's string was not found at all and is left out. Static QRIS has no amount per order, so it is
 * no method of a link, a page or a charge: its payments reach paylink as notifications of orders it
 * did not create (recorded as unknown orders and found by reconciliation).
 */
import type { FieldError } from '../platform/errors.js';

export const KNOWN_PAYMENT_METHODS: ReadonlySet<string> = new Set([
  'credit_card',
  'echannel',
  'permata_va',
  'bca_va',
  'bni_va',
  'bri_va',
  'cimb_va',
  'danamon_va',
  'bsi_va',
  'seabank_va',
  'saqu_va',
  'other_va',
  'gopay',
  'shopeepay',
  'ovo',
  'dana',
  'other_qris',
  'alfamart',
  'indomaret',
  'akulaku',
  'kredivo',
  'bank_transfer',
  'cstore',
]);

/**
 * The payment types the gateway refunds (card, GoPay, ShopeePay, DANA, OVO, QRIS, Kredivo, Akulaku:
 * https://docs.midtrans.com/reference/refund-transaction). Any other type (bank transfer, convenience store, …) is answered 412 "Merchant
 * cannot modify the status of the transaction": paylink says so before asking.
 */
// The new virtual accounts (BSI, SeaBank, Danamon, Saqu) report `bank_transfer` and are not refundable
// like every VA; OVO and DANA are; Google Pay's payment_type is unconfirmed, so it is not listed.
export const REFUNDABLE_PAYMENT_TYPES: ReadonlySet<string> = new Set([
  'credit_card',
  'gopay',
  'shopeepay',
  'dana',
  'ovo',
  'qris',
  'kredivo',
  'akulaku',
]);

export function refundableMethod(paymentType: string | null): boolean {
  return paymentType !== null && REFUNDABLE_PAYMENT_TYPES.has(paymentType);
}

/** A problem with a non-empty `enabled_payments` list that names no method the gateway offers. */
export function enabledPaymentsProblem(list: readonly string[] | undefined, path: string): FieldError | undefined {
  if (!list || list.length === 0 || list.some((m) => KNOWN_PAYMENT_METHODS.has(m))) return undefined;
  return {
    path,
    message: `names no payment method the gateway offers (known: ${[...KNOWN_PAYMENT_METHODS].join(', ')})`,
  };
}
