import type { CardBehaviour, CardToken } from './cards.js';
import type { Customer, Item, Json, OrderInput } from './lib/validate.js';

export type TxnStatus =
  'pending' | 'capture' | 'settlement' | 'deny' | 'cancel' | 'expire' | 'refund' | 'partial_refund';

/** Payment types whose customer finishes on a page the gateway redirects to. */
export const REDIRECT_TYPES = ['cimb_clicks', 'bri_epay', 'danamon_online', 'akulaku', 'kredivo', 'uob_ezpay'] as const;
export type RedirectType = (typeof REDIRECT_TYPES)[number];

export type PaymentType =
  'bank_transfer' | 'echannel' | 'gopay' | 'shopeepay' | 'qris' | 'cstore' | 'credit_card' | RedirectType;
export type FraudStatus = 'accept' | 'challenge' | 'deny';

export interface Refund {
  refund_chargeback_id: number;
  refund_amount: number;
  created_at: Date;
  reason?: string;
  refund_key?: string;
  bank_confirmed_at?: Date;
}

/** X-Override-Notification / X-Append-Notification captured when the transaction was created. */
export interface NotifyTargets {
  override?: string[];
  append?: string[];
}

/** `snap_api`: created through BI-SNAP, which the Core API serves only with `transaction-source: SNAP_API`. */
export type TxnSource =
  { kind: 'core' } | { kind: 'snap'; token: string } | { kind: 'link'; payment_link_id: string } | { kind: 'snap_api' };

/** A Core card charge: the card behind its token, and whether 3-D Secure is still to be done. */
export interface CardState {
  behaviour: CardBehaviour;
  cvvOk: boolean;
  brand: 'visa' | 'mastercard';
}

export interface Txn {
  transaction_id: string;
  order_id: string;
  /** The MID of the merchant whose ledger holds it: in its status bodies and notifications. */
  merchant_id: string;
  gross_amount: number;
  payment_type: PaymentType;
  method: string;
  status: TxnStatus;
  fraud_status?: FraudStatus;
  transaction_time: Date;
  expiry_time?: Date;
  settlement_time?: Date;
  fields: Json;
  extras: Json;
  items: Item[];
  customer?: Customer;
  refunds: Refund[];
  notify: NotifyTargets;
  source: TxnSource;
  card?: CardState;
  /** Only in the charge answer: the 3DS page or the redirect payment page. */
  redirect_url?: string;
  /** What the GoPay QR code encodes (QRIS carries its own `qr_string` field). */
  qr?: string;
}

export interface SnapSession {
  token: string;
  order: OrderInput;
  enabled_payments: string[];
  created_at: Date;
  expires_at: Date;
  /** Snap `expiry` also bounds the transaction created from the page. */
  txn_expiry?: Date;
  state: 'open' | 'superseded';
  transaction_id?: string;
  notify: NotifyTargets;
  extras: Json;
}

export interface Purchase {
  id: number;
  snap_token: string;
  order_id: string;
  transaction_id: string;
  created_at: Date;
  /**
   * Set when the customer went back to choose another method: the attempt no longer reserves a use
   * (it stays payable, as a virtual account number already handed out is, until it expires).
   */
  left_at?: Date;
}

export interface PaymentLink {
  id: number;
  order_id: string;
  payment_link_id: string;
  payment_link_type: 'FIXED_AMOUNT' | 'DYNAMIC_AMOUNT';
  gross_amount: number;
  /** DYNAMIC_AMOUNT only: each purchase pays an amount the payer enters within these bounds. */
  dynamic_amount?: { min_amount: number; max_amount: number; preset_amount?: number };
  title?: string;
  items: Item[];
  customer?: Customer;
  enabled_payments: string[];
  usage_limit: number;
  expiry_start: Date;
  expiry_duration: number;
  expiry_unit: string;
  expires_at: Date;
  created_at: Date;
  deleted_at?: Date;
  purchases: Purchase[];
  notify: NotifyTargets;
  extras: Json;
  credit_card_3d_secure: boolean;
  whitelist_bins: string[];
}

/** A recurring charge plan (`/v1/subscriptions`): recorded and kept up to date, never executed. */
export interface Subscription {
  id: string;
  name: string;
  amount: string;
  currency: string;
  payment_type: 'credit_card' | 'gopay';
  token: string;
  status: 'active' | 'inactive';
  schedule: { interval: number; interval_unit: string; max_interval?: number; start_time: Date };
  retry_schedule?: Json;
  gopay?: Json;
  metadata?: Json;
  customer_details?: Json;
  created_at: Date;
}

/** A GoPay account linked with `/v2/pay/account`: PENDING until the customer activates it, then ENABLED. */
export interface PayAccount {
  account_id: string;
  /** The id in the activation URLs the customer opens (`gpar_<uuid>`). */
  link_id: string;
  phone_number: string;
  country_code: string;
  redirect_url?: string;
  status: 'PENDING' | 'ENABLED' | 'DISABLED';
  /** The GoPay wallet's payment token, given once the account is ENABLED. */
  wallet_token: string;
}

export interface RequestLogEntry {
  id: number;
  at: string;
  method: string;
  path: string;
  api: GatewayApi;
  /** The merchant whose key the request carried; absent when no key matched (401). */
  merchant_id?: string;
  idempotency_key?: string;
  body?: unknown;
  status?: number;
}

export type GatewayApi = 'core' | 'snap' | 'payment_link';

/** Who a merchant is at the gateway: its keys, its MID and its dashboard notification URL. */
export interface MerchantSettings {
  serverKey: string;
  /** Accepted as `client_key` on the browser-side card paths; without one, only the server key opens them. */
  clientKey?: string;
  merchantId: string;
  /** Without one, the merchant's notifications go to the simulator-wide URL. */
  notificationUrl?: string;
}

export const DEFAULT_MERCHANT_ID = 'G123456789';

const REUSABLE: ReadonlySet<TxnStatus> = new Set(['expire', 'cancel', 'deny']);

/** An order id whose transaction expired, was cancelled or denied may be charged again. */
export function blocksOrderId(t: Txn): boolean {
  return !REUSABLE.has(t.status);
}

/** What the gateway holds for one merchant: transactions, Snap sessions, payment links, card tokens. */
export class Ledger {
  txns = new Map<string, Txn>();
  txnByOrder = new Map<string, string>();
  snaps = new Map<string, SnapSession>();
  snapByOrder = new Map<string, string>();
  links = new Map<string, PaymentLink>();
  linkByOrder = new Map<string, string>();
  cardTokens = new Map<string, CardToken>();
  subscriptions = new Map<string, Subscription>();
  payAccounts = new Map<string, PayAccount>();
  nextLinkId = 1;
  nextPurchaseId = 1;
  private lastSuffixMs = 0;

  addTxn(t: Txn): void {
    this.txns.set(t.transaction_id, t);
    this.txnByOrder.set(t.order_id, t.transaction_id);
  }

  /** Core paths accept either the order id or the transaction id. */
  findTxn(id: string): Txn | undefined {
    const byOrder = this.txnByOrder.get(id);
    return this.txns.get(byOrder ?? id);
  }

  linkByOrderId(orderId: string): PaymentLink | undefined {
    const plid = this.linkByOrder.get(orderId);
    return plid === undefined ? undefined : this.links.get(plid);
  }

  openSnapByOrder(orderId: string): SnapSession | undefined {
    const token = this.snapByOrder.get(orderId);
    const s = token === undefined ? undefined : this.snaps.get(token);
    return s && s.state === 'open' && s.transaction_id === undefined ? s : undefined;
  }

  /** 13-digit millisecond suffix for link purchases, bumped so two purchases never share one. */
  purchaseSuffix(now: number): string {
    this.lastSuffixMs = Math.max(now, this.lastSuffixMs + 1);
    return String(this.lastSuffixMs);
  }

  clear(): void {
    this.txns.clear();
    this.txnByOrder.clear();
    this.snaps.clear();
    this.snapByOrder.clear();
    this.links.clear();
    this.linkByOrder.clear();
    this.cardTokens.clear();
    this.subscriptions.clear();
    this.payAccounts.clear();
  }
}

const MAX_REQUEST_LOG = 5000;

/** The gateway calls received, for every merchant, newest last; the oldest go past the limit. */
export class RequestLog {
  entries: RequestLogEntry[] = [];
  private nextId = 1;

  add(entry: Omit<RequestLogEntry, 'id'>): RequestLogEntry {
    const logged: RequestLogEntry = { id: this.nextId++, ...entry };
    this.entries.push(logged);
    if (this.entries.length > MAX_REQUEST_LOG) this.entries.shift();
    return logged;
  }

  clear(): void {
    this.entries = [];
  }
}
