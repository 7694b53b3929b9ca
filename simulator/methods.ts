import { randomInt } from 'node:crypto';
import { REDIRECT_TYPES, type PaymentType, type RedirectType, type Txn } from './state.js';
import { isObject, type Json } from './lib/validate.js';

export interface MethodSpec {
  key: string;
  label: string;
  payment_type: PaymentType;
  bank?: string;
  store?: string;
  /** Default lifetime of a pending transaction of this kind, in ms. */
  expiryMs: number;
}

const DAY = 86_400_000;
const MIN = 60_000;

const SPECS: MethodSpec[] = [
  { key: 'credit_card', label: 'Credit/debit card', payment_type: 'credit_card', expiryMs: 10 * MIN },
  { key: 'bca_va', label: 'BCA Virtual Account', payment_type: 'bank_transfer', bank: 'bca', expiryMs: DAY },
  { key: 'bni_va', label: 'BNI Virtual Account', payment_type: 'bank_transfer', bank: 'bni', expiryMs: DAY },
  { key: 'bri_va', label: 'BRI Virtual Account', payment_type: 'bank_transfer', bank: 'bri', expiryMs: DAY },
  { key: 'cimb_va', label: 'CIMB Virtual Account', payment_type: 'bank_transfer', bank: 'cimb', expiryMs: DAY },
  {
    key: 'danamon_va',
    label: 'Danamon Virtual Account',
    payment_type: 'bank_transfer',
    bank: 'danamon',
    expiryMs: DAY,
  },
  { key: 'bsi_va', label: 'BSI Virtual Account', payment_type: 'bank_transfer', bank: 'bsi', expiryMs: DAY },
  // SeaBank and Saqu (2025-2026): their bank strings are unconfirmed (see src/gateway/payment-methods.ts).
  {
    key: 'seabank_va',
    label: 'SeaBank Virtual Account',
    payment_type: 'bank_transfer',
    bank: 'seabank',
    expiryMs: DAY,
  },
  { key: 'saqu_va', label: 'Saqu Virtual Account', payment_type: 'bank_transfer', bank: 'saqu', expiryMs: DAY },
  {
    key: 'permata_va',
    label: 'Permata Virtual Account',
    payment_type: 'bank_transfer',
    bank: 'permata',
    expiryMs: DAY,
  },
  { key: 'echannel', label: 'Mandiri Bill Payment', payment_type: 'echannel', expiryMs: DAY },
  { key: 'gopay', label: 'GoPay', payment_type: 'gopay', expiryMs: 15 * MIN },
  { key: 'shopeepay', label: 'ShopeePay', payment_type: 'shopeepay', expiryMs: 15 * MIN },
  { key: 'other_qris', label: 'QRIS', payment_type: 'qris', expiryMs: 15 * MIN },
  { key: 'alfamart', label: 'Alfamart', payment_type: 'cstore', store: 'alfamart', expiryMs: DAY },
  { key: 'indomaret', label: 'Indomaret', payment_type: 'cstore', store: 'indomaret', expiryMs: DAY },
];

const REDIRECT_LABELS: Record<RedirectType, string> = {
  cimb_clicks: 'CIMB Clicks',
  bri_epay: 'BRImo (BRI e-Pay)',
  danamon_online: 'Danamon Online Banking',
  akulaku: 'Akulaku PayLater',
  kredivo: 'Kredivo',
  uob_ezpay: 'UOB EZ Pay',
};

/** Internet banking and pay-later: pending until the customer finishes on the redirect page (2 h). */
const REDIRECT_SPECS: MethodSpec[] = REDIRECT_TYPES.map((t) => ({
  key: t,
  label: REDIRECT_LABELS[t],
  payment_type: t,
  expiryMs: 120 * MIN,
}));

export const METHODS: ReadonlyMap<string, MethodSpec> = new Map([...SPECS, ...REDIRECT_SPECS].map((s) => [s.key, s]));
/** The default offer of Snap and Payment Links (the redirect types only when asked for). */
export const ALL_METHOD_KEYS: readonly string[] = SPECS.map((s) => s.key);

export function isRedirectType(t: string): t is RedirectType {
  return (REDIRECT_TYPES as readonly string[]).includes(t);
}

/** Snap accepts the group aliases `bank_transfer` and `cstore` in enabled_payments. */
const ALIASES: Record<string, string[]> = {
  bank_transfer: [
    'bca_va',
    'bni_va',
    'bri_va',
    'cimb_va',
    'danamon_va',
    'bsi_va',
    'seabank_va',
    'saqu_va',
    'permata_va',
  ],
  cstore: ['alfamart', 'indomaret'],
  qris: ['other_qris'],
};

export function expandEnabled(list: readonly string[]): string[] {
  const out: string[] = [];
  for (const k of list) for (const m of ALIASES[k] ?? [k]) if (METHODS.has(m) && !out.includes(m)) out.push(m);
  return out;
}

/** Maps a Core charge body (payment_type + its object) to a method key, or an error message. */
export function methodFromCharge(paymentType: string, body: Json): string | { error: string } {
  const sub = body[paymentType];
  const obj: Json = isObject(sub) ? sub : {};
  switch (paymentType) {
    case 'bank_transfer': {
      const bank = typeof obj.bank === 'string' ? obj.bank.toLowerCase() : '';
      if (!bank) return { error: 'bank_transfer.bank is required' };
      return METHODS.has(`${bank}_va`) ? `${bank}_va` : { error: `bank_transfer.bank '${bank}' is not supported` };
    }
    case 'permata':
      return 'permata_va';
    case 'echannel':
    case 'gopay':
    case 'shopeepay':
    case 'credit_card':
      return paymentType;
    case 'qris':
      return 'other_qris';
    case 'cimb_clicks':
    case 'bri_epay':
    case 'danamon_online':
    case 'akulaku':
    case 'kredivo':
    case 'uob_ezpay':
      return paymentType;
    case 'cstore': {
      const store = typeof obj.store === 'string' ? obj.store.toLowerCase() : '';
      if (store === 'alfamart' || store === 'indomaret') return store;
      return { error: 'cstore.store must be one of alfamart, indomaret' };
    }
    default:
      return { error: `payment_type '${paymentType}' is not supported` };
  }
}

/** `/_sim/.../pay` takes either a method key or a Core payment_type. */
export function methodFromLoose(name: string | undefined): string | undefined {
  if (name === undefined) return 'bca_va';
  if (METHODS.has(name)) return name;
  const mapped: Record<string, string> = {
    bank_transfer: 'bca_va',
    qris: 'other_qris',
    cstore: 'alfamart',
    permata: 'permata_va',
  };
  return mapped[name];
}

function digits(n: number): string {
  let s = String(randomInt(1, 10));
  while (s.length < n) s += String(randomInt(0, 10));
  return s;
}

/** An EMVCo-shaped QR payload (QRIS `qr_string`; what the GoPay QR code encodes). */
export function qrPayload(): string {
  return `00020101021226620014COM.GO-JEK.WWW011993600914${digits(10)}0210G1234567890303UMI51440014ID.CO.QRIS.WWW0215ID10200000000010303UMI5204581253033605802ID5910SIMULATOR6007JAKARTA6105123456304${digits(4)}`;
}

export interface FieldContext {
  baseUrl: string;
  transactionId: string;
  vaNumber?: string;
  acquirer?: string;
}

/** Method-specific fields as they appear in charge responses, status bodies and notifications. */
export function methodFields(spec: MethodSpec, ctx: FieldContext): Json {
  const trx = ctx.transactionId;
  switch (spec.payment_type) {
    case 'bank_transfer':
      if (spec.bank === 'permata') return { permata_va_number: ctx.vaNumber ?? `8778${digits(12)}` };
      return {
        va_numbers: [{ bank: spec.bank, va_number: ctx.vaNumber ?? `12785${digits(10)}` }],
        payment_amounts: [],
      };
    case 'echannel':
      return { bill_key: digits(12), biller_code: '70012' };
    case 'cstore':
      return { payment_code: digits(spec.store === 'indomaret' ? 14 : 16), store: spec.store };
    case 'qris': {
      const acquirer = ctx.acquirer ?? 'gopay';
      return {
        acquirer,
        qr_string: qrPayload(),
        actions: [{ name: 'generate-qr-code', method: 'GET', url: `${ctx.baseUrl}/v2/qris/${trx}/qr-code` }],
      };
    }
    case 'gopay':
      return {
        actions: [
          { name: 'generate-qr-code', method: 'GET', url: `${ctx.baseUrl}/v2/gopay/${trx}/qr-code` },
          { name: 'deeplink-redirect', method: 'GET', url: `${ctx.baseUrl}/v2/gopay/${trx}/deeplink` },
          { name: 'get-status', method: 'GET', url: `${ctx.baseUrl}/v2/${trx}/status` },
          { name: 'cancel', method: 'POST', url: `${ctx.baseUrl}/v2/${trx}/cancel` },
        ],
      };
    case 'shopeepay':
      return {
        actions: [{ name: 'deeplink-redirect', method: 'GET', url: `${ctx.baseUrl}/v2/shopeepay/${trx}/deeplink` }],
      };
    case 'credit_card':
      return {
        bank: 'mandiri',
        card_type: 'credit',
        channel_response_code: '00',
        channel_response_message: 'Approved',
        eci: '05',
      };
    default:
      return {};
  }
}

const REDIRECT_MESSAGES: Record<RedirectType, string> = {
  cimb_clicks: 'Success, CIMB Clicks transaction is successful',
  bri_epay: 'Success, BRI E-Pay transaction is successful',
  danamon_online: 'Success, Danamon Online transaction is successful',
  akulaku: 'Success, Akulaku transaction is created',
  kredivo: 'Success, Kredivo transaction is created',
  uob_ezpay: 'Success, UOB EZ Pay transaction is created',
};

function cardMessage(t: Txn): string {
  const f = t.fields;
  if (t.status === 'deny') {
    if (t.fraud_status === 'deny') return 'Deny by FDS';
    const bank = typeof f.bank === 'string' ? f.bank.toUpperCase() : 'BNI';
    return `Deny by Bank [${bank}] with code [${String(f.channel_response_code ?? '05')}] and message [${String(f.channel_response_message ?? 'Do not honor')}]`;
  }
  if (t.fraud_status === 'challenge') return 'Challenge by FDS';
  return 'Success, Credit Card transaction is successful';
}

export function chargeMessage(spec: MethodSpec, t: Txn): string {
  if (spec.payment_type === 'credit_card') return cardMessage(t);
  if (spec.bank === 'permata') return 'Success, PERMATA VA transaction is successful';
  if (isRedirectType(spec.payment_type)) return REDIRECT_MESSAGES[spec.payment_type];
  const byType: Record<string, string> = {
    bank_transfer: 'Success, Bank Transfer transaction is created',
    echannel: 'OK, Mandiri Bill transaction is successful',
    gopay: 'GO-PAY transaction is created',
    shopeepay: 'ShopeePay transaction is created',
    qris: 'QRIS transaction is created',
    cstore: 'Success, cstore transaction is successful',
  };
  return byType[spec.payment_type] ?? 'Success';
}
