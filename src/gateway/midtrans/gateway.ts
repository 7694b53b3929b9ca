/**
 * Midtrans as the gateway port: the port's orders written as Midtrans request bodies, and the
 * HTTP statuses that carry a meaning (404: not known, 409: the link exists) turned into results.
 * The wire client (`client.ts`) does the calls.
 */
import type { RuntimeConfig } from '../../model/runtime-config.js';
import type { GatewayAnswer } from '../answer.js';
import type { GatewayReport } from '../report.js';
import type {
  ActionResult,
  Answered,
  ChargeOrder,
  Gateway,
  LinkAtGateway,
  LinkCreation,
  PaymentLinkOrder,
  PaymentRef,
  RefundOrder,
  SnapCreation,
  SnapOrder,
} from '../port.js';
import type { Carrier } from '../../model/payment.js';
import type { GatewayCallOptions, MidtransClient } from './client.js';
import { MidtransRefusal } from './errors.js';
import { paymentLinkBody, snapBody, storedPaymentLinkRequest } from './requests.js';
import { chargeBody } from './charge-body.js';
import { newestPurchase } from './wire.js';
import { signatureVerifies } from './signature.js';

/** The refusal the wire client threw; anything else (no answer, a defect) goes on as it is. */
function refusalOf(err: unknown): MidtransRefusal {
  if (err instanceof MidtransRefusal) return err;
  throw err;
}

async function answered(call: Promise<GatewayAnswer>): Promise<Answered> {
  try {
    return { kind: 'answered', answer: await call };
  } catch (err) {
    return { kind: 'refused', refusal: refusalOf(err).refusal };
  }
}

/** Cancel and expire answer "404" (in the body or as the HTTP status) for an id the gateway does not know. */
async function acted(call: Promise<GatewayAnswer>): Promise<ActionResult> {
  try {
    return { kind: 'answered', answer: await call };
  } catch (err) {
    const refused = refusalOf(err);
    if (refused.refusal.code === '404') return { kind: 'not_found', refusal: refused.refusal };
    throw refused;
  }
}

export class MidtransGateway implements Gateway {
  constructor(
    private readonly client: MidtransClient,
    /** Where the server key is read, for each notification (the runtime config may change it). */
    private readonly runtimeConfig: () => Promise<RuntimeConfig>,
    /** Sent as `X-Override-Notification` on every create call: where this account's notifications go. Unset: the dashboard's URL. */
    private readonly notificationUrl?: string,
  ) {}

  /** The options of a call that creates a transaction at the gateway. */
  private createOptions(idempotencyKey: string | undefined): GatewayCallOptions {
    return {
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      ...(this.notificationUrl === undefined ? {} : { overrideNotification: this.notificationUrl }),
    };
  }

  paymentLinkRequest(order: PaymentLinkOrder): Record<string, unknown> {
    return paymentLinkBody(order);
  }

  async createPaymentLink(request: Record<string, unknown>, idempotencyKey?: string): Promise<LinkCreation> {
    try {
      const created = await this.client.createPaymentLink(
        storedPaymentLinkRequest(request),
        this.createOptions(idempotencyKey),
      );
      return { kind: 'created', paymentUrl: created.payment_url, answerJson: JSON.stringify(created) };
    } catch (err) {
      const refused = refusalOf(err);
      return refused.httpStatus === 409
        ? { kind: 'exists', refusal: refused.refusal }
        : { kind: 'refused', refusal: refused.refusal };
    }
  }

  async findPaymentLink(gatewayOrderId: string): Promise<LinkAtGateway | undefined> {
    const link = await this.client.getPaymentLink(gatewayOrderId);
    if (!link) return undefined;
    return {
      orderId: link.order_id,
      url: link.payment_link_url,
      paymentLinkId: link.payment_link_id,
      newestPurchase: newestPurchase(link),
    };
  }

  deletePaymentLink(gatewayOrderId: string): Promise<boolean> {
    return this.client.deletePaymentLink(gatewayOrderId);
  }

  async createSnap(order: SnapOrder, idempotencyKey: string): Promise<SnapCreation> {
    try {
      const res = await this.client.createSnapTransaction(snapBody(order), this.createOptions(idempotencyKey));
      return { kind: 'created', token: res.token, redirectUrl: res.redirect_url, answerJson: JSON.stringify(res) };
    } catch (err) {
      return { kind: 'refused', refusal: refusalOf(err).refusal };
    }
  }

  async charge(order: ChargeOrder, idempotencyKey: string): Promise<Answered> {
    return answered(this.client.charge(chargeBody(order), this.createOptions(idempotencyKey)));
  }

  /** The legacy API carries every charge it is asked for. */
  carrierFor(): Promise<Carrier> {
    return Promise.resolve('legacy');
  }

  status(id: string, o: { timeoutMs?: number } & PaymentRef = {}): Promise<GatewayAnswer | undefined> {
    return this.client.status(id, {
      ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
      snapApiSource: o.carrier === 'snap_bi',
    });
  }

  cancel(id: string, o: PaymentRef = {}): Promise<ActionResult> {
    return acted(this.client.cancel(id, { snapApiSource: o.carrier === 'snap_bi' }));
  }

  /** The Core API documents no expire for a BI-SNAP transaction: such a one is cancelled instead, which ends it the same way. */
  expire(id: string, o: PaymentRef = {}): Promise<ActionResult> {
    if (o.carrier === 'snap_bi') return this.cancel(id, o);
    return acted(this.client.expire(id));
  }

  refund(id: string, r: RefundOrder, o: PaymentRef = {}): Promise<Answered> {
    return answered(
      this.client.refund(
        id,
        {
          refund_key: r.refundKey,
          ...(r.amount === undefined ? {} : { amount: r.amount }),
          ...(r.reason === undefined ? {} : { reason: r.reason }),
        },
        { snapApiSource: o.carrier === 'snap_bi' },
      ),
    );
  }

  async verifyNotification(report: GatewayReport, signature: string): Promise<boolean> {
    const key = (await this.runtimeConfig()).gateway.server_key ?? '';
    return key !== '' && signatureVerifies(report, signature, key);
  }
}
