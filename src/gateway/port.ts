/**
 * The gateway port: what the domain asks of a payment gateway, in paylink's terms. An answer the
 * domain acts on is a result (a link the gateway already holds, a refusal to record, a transaction
 * it does not know); a call that got no usable answer, or a refusal the caller has no use for, is
 * thrown as a `GatewayError`. The composition root builds the `Gateway` (Midtrans today,
 * `midtrans/gateway.ts`); nothing in the domain knows which one it is, so another protocol or one
 * gateway per merchant account fills the same interface.
 */
import type { Carrier } from '../model/payment.js';
import { AppError } from '../platform/errors.js';
import type { GatewayAnswer } from './answer.js';
import type { ChargeMethodObject, PaymentType } from './charge-methods.js';
import type { Customer, GatewayExpiry, Item, OpenAmount } from './order.js';
import type { GatewayReport } from './report.js';

/** Why the gateway said no: its own code (e.g. `"412"`; its HTTP status when the body names none) and message. */
export interface Refusal {
  code: string;
  message: string;
}

/** refused: the gateway answered no; timeout: no answer in time (it may have acted); unavailable: no connection; bad_response: unparseable. */
export type GatewayErrorKind = 'refused' | 'timeout' | 'unavailable' | 'bad_response';

export class GatewayError extends Error {
  constructor(
    readonly kind: GatewayErrorKind,
    message: string,
    /** Set on a refusal. */
    readonly refusal?: Refusal,
  ) {
    super(message);
    this.name = 'GatewayError';
  }

  /** A refusal the domain recorded, on its way to the caller's answer. */
  static refused(refusal: Refusal): GatewayError {
    return new GatewayError('refused', `gateway refused (${refusal.code})`, refusal);
  }
}

/** Maps a gateway failure onto the service's error catalogue (refusals 502, timeouts 504, unreachable 503). */
export function toAppError(err: GatewayError): AppError {
  switch (err.kind) {
    case 'timeout':
      return new AppError('GATEWAY_TIMEOUT', 'The gateway did not answer in time; retrying the same request is safe.');
    case 'unavailable':
      return new AppError('GATEWAY_UNAVAILABLE', 'The gateway could not be reached.');
    case 'bad_response':
      return new AppError('GATEWAY_BAD_RESPONSE', 'The gateway answered with something that could not be understood.');
    case 'refused': {
      const status_code = err.refusal?.code ?? '502';
      const status_message = err.refusal?.message ?? 'refused';
      return new AppError('GATEWAY_REFUSED', `The gateway refused the request: ${status_message}`, {
        gateway: { status_code, status_message },
      });
    }
  }
}

/** A payment link for one order, used once. */
export interface PaymentLinkOrder {
  gatewayOrderId: string;
  /** Ours (`[a-z0-9-]{1,50}`): the gateway keeps the link under it, so a link made by a call that timed out is recognised. */
  paymentLinkId: string;
  nominal: number;
  items: Item[];
  customer?: Customer;
  expiry: GatewayExpiry;
  /** Empty: every method the gateway offers. */
  enabledPayments: string[];
  /** How many purchases the link takes (1–1,000,000; absent: 1); each one is a transaction of its own at the gateway. */
  usageLimit?: number;
  /**
   * An open-amount link: the payer enters the amount within these bounds. `items` are not sent; the
   * gateway ignores `gross_amount` on such a link but its sample still sends one, so `nominal` goes.
   */
  openAmount?: OpenAmount;
}

/** A hosted payment page (Snap) for one order. */
export interface SnapOrder {
  gatewayOrderId: string;
  nominal: number;
  items?: Item[];
  customer?: Customer;
  expiry?: GatewayExpiry;
  /** Empty: every method the gateway offers. */
  enabledPayments: string[];
}

/** A direct charge with one payment method. */
export interface ChargeOrder {
  gatewayOrderId: string;
  nominal: number;
  paymentType: PaymentType;
  /** From `methodObject` for the same payment type. */
  method: ChargeMethodObject;
  items?: Item[];
  customer?: Customer;
  expiry?: GatewayExpiry;
  /** The API that carries it, as `carrierFor` chose and the record keeps; absent: chosen now. */
  carrier?: Carrier;
}

/**
 * What the record knows of the payment a status, cancel, expire or refund acts on: the API that
 * created it and its payment type. Absent (a notification for an id nobody recorded): every API
 * that may know it is asked.
 */
export interface PaymentRef {
  carrier?: Carrier;
  paymentType?: string | null;
}

export interface RefundOrder {
  /** The gateway keeps the refund under this key: the same key again is the same refund. */
  refundKey: string;
  /** Whole rupiah; absent: all that is left. */
  amount?: number;
  /** Shown at the gateway with the refund. */
  reason?: string;
}

/**
 * `exists`: the gateway already holds a link under this order id (an earlier call may have made it
 * and timed out); its `refusal` is the answer when that link cannot be found. `answerJson`: the
 * gateway's answer as the record keeps it.
 */
export type LinkCreation =
  | { kind: 'created'; paymentUrl: string; answerJson: string }
  | { kind: 'exists'; refusal: Refusal }
  | { kind: 'refused'; refusal: Refusal };

/** A payment link as the gateway holds it. */
export interface LinkAtGateway {
  orderId?: string;
  url?: string;
  paymentLinkId?: string;
  /** The gateway order id of its newest purchase; null while nobody has bought it. */
  newestPurchase: string | null;
}

export type SnapCreation =
  { kind: 'created'; token: string; redirectUrl: string; answerJson: string } | { kind: 'refused'; refusal: Refusal };

/** The gateway's answer about the transaction it acted on, or its refusal. */
export type Answered = { kind: 'answered'; answer: GatewayAnswer } | { kind: 'refused'; refusal: Refusal };

/** Cancel and expire: `not_found` when the gateway knows no transaction under the id (`refusal`: the answer when that is an error); other refusals are thrown. */
export type ActionResult = { kind: 'answered'; answer: GatewayAnswer } | { kind: 'not_found'; refusal: Refusal };

/** The gateway of each account (one merchant each), built on first use and kept. */
export interface Gateways {
  for(account: string): Gateway;
}

/**
 * A payment gateway, for one merchant account. Ids are gateway order ids or gateway transaction
 * ids (`status`, `cancel`, `expire`, `refund` take either). Every call rejects with a
 * `GatewayError` when it gets no usable answer.
 */
export interface Gateway {
  /**
   * The request that creates `order`'s link at this gateway. Made once, when the order is drafted,
   * and stored with it: a retry sends exactly this again (the same link id, the same window).
   */
  paymentLinkRequest(order: PaymentLinkOrder): Record<string, unknown>;
  /** Creates a link from a request `paymentLinkRequest` made (read back from the record; throws when it is not one). */
  createPaymentLink(request: Record<string, unknown>, idempotencyKey?: string): Promise<LinkCreation>;
  /** Undefined when the gateway holds no link under this order id. */
  findPaymentLink(gatewayOrderId: string): Promise<LinkAtGateway | undefined>;
  /** Deactivates a link; false when the gateway did not know it. */
  deletePaymentLink(gatewayOrderId: string): Promise<boolean>;
  /** `idempotencyKey`: the same key within minutes is answered with the first call's result. */
  createSnap(order: SnapOrder, idempotencyKey: string): Promise<SnapCreation>;
  /** The API a charge of this payment type goes through now: `snap_bi` when `gateway.snap_bi.methods` lists it. */
  carrierFor(paymentType: string): Promise<Carrier>;
  charge(order: ChargeOrder, idempotencyKey: string): Promise<Answered>;
  /** Undefined when the gateway does not know the id; `timeoutMs` tightens the call's limit (e.g. while a webhook waits). */
  status(id: string, o?: { timeoutMs?: number } & PaymentRef): Promise<GatewayAnswer | undefined>;
  cancel(id: string, o?: PaymentRef): Promise<ActionResult>;
  expire(id: string, o?: PaymentRef): Promise<ActionResult>;
  refund(id: string, refund: RefundOrder, o?: PaymentRef): Promise<Answered>;
  /** Whether `signature` is this gateway's signature, with this account's key, of the report's signed fields. */
  verifyNotification(report: GatewayReport, signature: string): Promise<boolean>;
}
