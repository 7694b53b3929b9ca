import { jakartaTime, uuid } from './lib/format.js';
import type { Json, OrderInput } from './lib/validate.js';
import { settleCard, startCardCharge } from './card-flow.js';
import { METHODS, isRedirectType, methodFields, qrPayload, type MethodSpec } from './methods.js';
import type { Notifier } from './notifier.js';
import {
  Ledger,
  blocksOrderId,
  type FraudStatus,
  type MerchantSettings,
  type NotifyTargets,
  type PaymentLink,
  type Refund,
  type SnapSession,
  type Txn,
  type TxnSource,
  type TxnStatus,
} from './state.js';

export interface CreateTxnInput {
  order: OrderInput;
  method: string;
  notify: NotifyTargets;
  source: TxnSource;
  extras: Json;
  expiry?: Date;
  vaNumber?: string;
  acquirer?: string;
  /** Core card charges settle the outcome at once (or after 3DS); hosted-page card payments wait for "Pay now". */
  cardToken?: string;
  /** `credit_card.authentication: true`: the charge waits for the 3DS page. */
  authentication?: boolean;
}

export interface RefundInput {
  amount?: number;
  reason?: string;
  refund_key?: string;
}

export type RefundResult =
  { ok: true; txn: Txn; refund: Refund; message: string } | { ok: false; code: string; message: string };

/** Online refunds exist only for cards, e-wallets and QRIS; VA/OTC money goes back offline. */
const REFUNDABLE_TYPES: ReadonlySet<string> = new Set([
  'credit_card',
  'gopay',
  'shopeepay',
  'qris',
  'akulaku',
  'kredivo',
]);

export type ActionResult = { ok: true; txn: Txn; message: string } | { ok: false; code: string; message: string };

const NOT_MODIFIABLE = 'Merchant cannot modify the status of the transaction';

export class Engine {
  constructor(
    readonly ledger: Ledger,
    readonly notifier: Notifier,
    private readonly baseUrl: () => string,
    private readonly merchant: MerchantSettings,
  ) {}

  /** Whether a Core charge / Snap pick may use this order id now. */
  orderIdTaken(orderId: string): boolean {
    const t = this.ledger.findTxn(orderId);
    return t !== undefined && t.order_id === orderId && blocksOrderId(t);
  }

  createTxn(input: CreateTxnInput): Txn {
    const spec = METHODS.get(input.method);
    if (!spec) throw new Error(`unknown method ${input.method}`);
    const now = new Date();
    const transactionId = uuid();
    const t: Txn = {
      transaction_id: transactionId,
      order_id: input.order.order_id,
      merchant_id: this.merchant.merchantId,
      gross_amount: input.order.gross_amount,
      payment_type: spec.payment_type,
      method: spec.key,
      status: 'pending',
      transaction_time: now,
      fields: methodFields(spec, {
        baseUrl: this.baseUrl(),
        transactionId,
        vaNumber: input.vaNumber,
        acquirer: input.acquirer,
      }),
      extras: input.extras,
      items: input.order.items,
      refunds: [],
      notify: input.notify,
      source: input.source,
    };
    if (input.order.customer) t.customer = input.order.customer;
    this.applyInitialState(t, spec, input, now);
    this.supersedeSnap(t);
    this.ledger.addTxn(t);
    this.notifier.notify(t, this.merchant);
    return t;
  }

  private applyInitialState(t: Txn, spec: MethodSpec, input: CreateTxnInput, now: Date): void {
    if (spec.payment_type !== 'cstore') t.fraud_status = 'accept';
    if (spec.payment_type === 'credit_card' && input.cardToken !== undefined) {
      const threeDs = input.authentication === true ? `${this.baseUrl()}/v2/token/rba/redirect` : undefined;
      const outcome = startCardCharge(t, input.cardToken, this.ledger.cardTokens, threeDs);
      if (outcome === 'pending') return;
      t.status = outcome.status;
      t.fraud_status = outcome.fraud;
      return;
    }
    if (spec.payment_type === 'gopay') t.qr = qrPayload();
    if (isRedirectType(spec.payment_type))
      t.redirect_url = `${this.baseUrl()}/v2/${spec.payment_type}/redirect/${t.transaction_id}`;
    t.expiry_time = input.expiry ?? new Date(now.getTime() + spec.expiryMs);
  }

  /** The customer's answer on the 3DS page: the card's outcome, or a deny when not authenticated. */
  complete3ds(t: Txn, authenticated: boolean): ActionResult {
    if (t.status !== 'pending' || t.payment_type !== 'credit_card' || !t.card)
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    const outcome = settleCard(t, authenticated ? 'ok' : 'failed');
    this.setStatus(t, outcome.status, outcome.fraud);
    return {
      ok: true,
      txn: t,
      message:
        outcome.status === 'deny' ? 'Card is not authenticated.' : 'Success, Credit Card transaction is successful',
    };
  }

  private addCardFields(t: Txn, masked: string): void {
    t.fields.masked_card = masked;
    if (t.status === 'capture') t.fields.approval_code = String(Date.now());
  }

  /** Charging an order id that still has an untouched Snap token invalidates that token. */
  private supersedeSnap(t: Txn): void {
    if (t.source.kind === 'snap') return;
    const s = this.ledger.openSnapByOrder(t.order_id);
    if (s) s.state = 'superseded';
  }

  private setStatus(t: Txn, status: TxnStatus, fraud?: FraudStatus): void {
    t.status = status;
    if (fraud) t.fraud_status = fraud;
    this.notifier.notify(t, this.merchant);
  }

  /** Customer pays: VA/e-wallet/OTC settle, cards capture. */
  pay(t: Txn): ActionResult {
    if (t.status === 'capture' && t.fraud_status !== 'challenge') {
      t.settlement_time = new Date();
      this.setStatus(t, 'settlement');
      return { ok: true, txn: t, message: 'Success, transaction is settled' };
    }
    if (t.status !== 'pending') return { ok: false, code: '412', message: NOT_MODIFIABLE };
    if (t.payment_type === 'credit_card' && t.card) return this.complete3ds(t, true);
    if (t.payment_type === 'credit_card') {
      this.addCardFields(t, typeof t.fields.masked_card === 'string' ? t.fields.masked_card : '481111-1114');
      delete t.expiry_time;
      this.setStatus(t, 'capture', 'accept');
      return { ok: true, txn: t, message: 'Success, Credit Card transaction is successful' };
    }
    const now = new Date();
    t.settlement_time = now;
    const amounts = t.fields.payment_amounts;
    if (Array.isArray(amounts)) amounts.push({ paid_at: jakartaTime(now), amount: t.gross_amount.toFixed(2) });
    if (t.payment_type === 'qris') Object.assign(t.fields, { transaction_type: 'on-us', issuer: t.fields.acquirer });
    this.setStatus(t, 'settlement');
    return { ok: true, txn: t, message: 'Success, transaction is settled' };
  }

  cancel(t: Txn): ActionResult {
    if (t.status !== 'pending' && t.status !== 'capture') return { ok: false, code: '412', message: NOT_MODIFIABLE };
    this.setStatus(t, 'cancel');
    return { ok: true, txn: t, message: 'Success, transaction is canceled' };
  }

  expire(t: Txn): ActionResult {
    if (t.status !== 'pending') return { ok: false, code: '412', message: NOT_MODIFIABLE };
    this.setStatus(t, 'expire');
    return { ok: true, txn: t, message: 'Success, transaction has expired' };
  }

  approve(t: Txn): ActionResult {
    if (t.status !== 'capture' || t.fraud_status !== 'challenge')
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    this.setStatus(t, 'capture', 'accept');
    return { ok: true, txn: t, message: 'Success, transaction is approved' };
  }

  deny(t: Txn): ActionResult {
    if (t.status !== 'capture' || t.fraud_status !== 'challenge')
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    this.setStatus(t, 'deny', 'deny');
    return { ok: true, txn: t, message: 'Success, transaction is denied' };
  }

  /** Control-API deny: also models the bank reversal of a pending or just-settled payment. */
  forceDeny(t: Txn): ActionResult {
    if (!['pending', 'capture', 'settlement'].includes(t.status))
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    this.setStatus(t, 'deny', t.payment_type === 'credit_card' ? 'deny' : t.fraud_status);
    return { ok: true, txn: t, message: 'Success, transaction is denied' };
  }

  challenge(t: Txn): ActionResult {
    if (t.status !== 'pending' && !(t.status === 'capture' && t.fraud_status === 'accept')) {
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    }
    delete t.expiry_time;
    this.setStatus(t, 'capture', 'challenge');
    return { ok: true, txn: t, message: 'Challenge by FDS' };
  }

  refund(t: Txn, input: RefundInput, force = false): RefundResult {
    if (input.refund_key !== undefined) {
      const prior = t.refunds.find((r) => r.refund_key === input.refund_key);
      if (prior) return { ok: true, txn: t, refund: prior, message: 'Success, refund request is approved' };
      if (this.refundKeyUsedElsewhere(input.refund_key))
        return { ok: false, code: '406', message: 'Duplicate refund ID' };
    }
    const refundable = force || REFUNDABLE_TYPES.has(t.payment_type);
    if (!refundable || !['settlement', 'partial_refund', ...(force ? ['capture'] : [])].includes(t.status)) {
      return { ok: false, code: '412', message: NOT_MODIFIABLE };
    }
    const remaining = t.gross_amount - t.refunds.reduce((a, r) => a + r.refund_amount, 0);
    const amount = input.amount ?? remaining;
    if (!Number.isInteger(amount) || amount <= 0 || amount > remaining) {
      return { ok: false, code: '414', message: 'Refund request is rejected due to invalid amount' };
    }
    const refund: Refund = {
      refund_chargeback_id: this.ledger.nextPurchaseId++,
      refund_amount: amount,
      created_at: new Date(),
    };
    if (input.reason !== undefined) refund.reason = input.reason;
    if (input.refund_key !== undefined) refund.refund_key = input.refund_key;
    t.refunds.push(refund);
    this.setStatus(t, amount === remaining ? 'refund' : 'partial_refund');
    // The gateway notifies twice: once on approval, again when the bank confirms.
    refund.bank_confirmed_at = new Date();
    this.notifier.notify(t, this.merchant);
    return { ok: true, txn: t, refund, message: 'Success, refund request is approved' };
  }

  private refundKeyUsedElsewhere(key: string): boolean {
    for (const t of this.ledger.txns.values()) if (t.refunds.some((r) => r.refund_key === key)) return true;
    return false;
  }

  /** Purchases on a link are separate transactions: link order id + "-" + 13-digit ms timestamp. */
  /** A purchase on `link`; `amount` is what the payer entered on a DYNAMIC_AMOUNT link (checked by the caller: `linkAmount`). */
  createPurchase(link: PaymentLink, method: string, amount?: number): Txn {
    const orderId = `${link.order_id}-${this.ledger.purchaseSuffix(Date.now())}`;
    const spec = METHODS.get(method);
    const methodExpiry = Date.now() + (spec?.expiryMs ?? 86_400_000);
    const dynamic = link.payment_link_type === 'DYNAMIC_AMOUNT';
    const gross = dynamic && amount !== undefined ? amount : link.gross_amount;
    const t = this.createTxn({
      order: { order_id: orderId, gross_amount: gross, items: dynamic ? [] : link.items, customer: link.customer },
      method,
      notify: link.notify,
      source: { kind: 'link', payment_link_id: link.payment_link_id },
      extras: link.extras,
      expiry: new Date(Math.min(methodExpiry, link.expires_at.getTime())),
    });
    link.purchases.push({
      id: this.ledger.nextPurchaseId++,
      snap_token: uuid(),
      order_id: orderId,
      transaction_id: t.transaction_id,
      created_at: new Date(),
    });
    return t;
  }

  pickSnapMethod(s: SnapSession, method: string): Txn {
    const input: CreateTxnInput = {
      order: s.order,
      method,
      notify: s.notify,
      source: { kind: 'snap', token: s.token },
      extras: s.extras,
    };
    if (s.txn_expiry) input.expiry = s.txn_expiry;
    const t = this.createTxn(input);
    s.transaction_id = t.transaction_id;
    return t;
  }

  expireDue(now: number): void {
    for (const t of this.ledger.txns.values()) {
      if (t.status === 'pending' && t.expiry_time && t.expiry_time.getTime() <= now) this.setStatus(t, 'expire');
    }
  }

  /** Usage counts paid purchases; a pending purchase reserves a use until it ends. */
  linkUsage(link: PaymentLink): { paid: number; reserved: number } {
    let paid = 0;
    let reserved = 0;
    for (const p of link.purchases) {
      const t = this.ledger.txns.get(p.transaction_id);
      if (!t) continue;
      if (['capture', 'settlement', 'refund', 'partial_refund'].includes(t.status)) paid++;
      else if (t.status === 'pending' && !p.left_at) reserved++;
    }
    return { paid, reserved };
  }
}
