/**
 * One account's gateway when BI-SNAP carries some of its payment methods: a charge of a type that
 * `gateway.snap_bi.methods` lists goes through BI-SNAP, every other call through the legacy
 * adapter. Status, cancel, expire and refund follow the payment's recorded carrier: a legacy
 * payment goes to the legacy API only; a BI-SNAP payment to its BI-SNAP product while its method is
 * still listed, else to the legacy API with `transaction-source: SNAP_API` (the gateway serves a
 * BI-SNAP transaction there, never the other way round). Without a record (a notification for an
 * id nobody recorded) the BI-SNAP products of the listed methods are asked first, then the legacy
 * API. With no method listed (the default) it is the legacy gateway, call for call.
 */
import type { Carrier } from '../../model/payment.js';
import type { RuntimeConfig, SnapBiConfig } from '../../model/runtime-config.js';
import type { GatewayAnswer } from '../answer.js';
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
import type { GatewayReport } from '../report.js';
import { kindOf, type SnapBiGateway, type SnapBiKind } from './gateway.js';

/** The BI-SNAP products the listed methods use, each once. */
export function snapBiKinds(b: SnapBiConfig): SnapBiKind[] {
  return [...new Set(b.methods.map((m) => kindOf(m)).filter((k): k is SnapBiKind => k !== undefined))];
}

export class RoutedGateway implements Gateway {
  constructor(
    private readonly legacy: Gateway,
    private readonly snapBi: SnapBiGateway,
    private readonly runtimeConfig: () => Promise<RuntimeConfig>,
  ) {}

  private async kinds(): Promise<SnapBiKind[]> {
    return snapBiKinds((await this.runtimeConfig()).gateway.snap_bi);
  }

  /** The BI-SNAP product that knows `id`, with its answer; undefined when none does. */
  private async find(id: string): Promise<{ kind: SnapBiKind; answer: GatewayAnswer } | undefined> {
    for (const kind of await this.kinds()) {
      const answer = await this.snapBi.status(kind, id);
      if (answer) return { kind, answer };
    }
    return undefined;
  }

  /**
   * Where a call on a payment goes: `snap` with the BI-SNAP product that serves it, `legacy`, or
   * `search` when nothing is recorded about it.
   */
  private async route(
    ref: PaymentRef,
  ): Promise<{ via: 'snap'; kind: SnapBiKind } | { via: 'legacy' } | { via: 'search' }> {
    if (ref.carrier === undefined) return { via: 'search' };
    if (ref.carrier === 'legacy') return { via: 'legacy' };
    const kind = ref.paymentType ? kindOf(ref.paymentType) : undefined;
    return kind !== undefined && (await this.kinds()).includes(kind) ? { via: 'snap', kind } : { via: 'legacy' };
  }

  async carrierFor(paymentType: string): Promise<Carrier> {
    const methods = (await this.runtimeConfig()).gateway.snap_bi.methods;
    return methods.some((m) => m === paymentType) ? 'snap_bi' : 'legacy';
  }

  paymentLinkRequest(order: PaymentLinkOrder): Record<string, unknown> {
    return this.legacy.paymentLinkRequest(order);
  }

  createPaymentLink(request: Record<string, unknown>, idempotencyKey?: string): Promise<LinkCreation> {
    return this.legacy.createPaymentLink(request, idempotencyKey);
  }

  findPaymentLink(gatewayOrderId: string): Promise<LinkAtGateway | undefined> {
    return this.legacy.findPaymentLink(gatewayOrderId);
  }

  deletePaymentLink(gatewayOrderId: string): Promise<boolean> {
    return this.legacy.deletePaymentLink(gatewayOrderId);
  }

  createSnap(order: SnapOrder, idempotencyKey: string): Promise<SnapCreation> {
    return this.legacy.createSnap(order, idempotencyKey);
  }

  async charge(order: ChargeOrder, idempotencyKey: string): Promise<Answered> {
    const carrier = order.carrier ?? (await this.carrierFor(order.paymentType));
    if (carrier === 'snap_bi' && kindOf(order.paymentType) !== undefined) return this.snapBi.charge(order);
    return this.legacy.charge(order, idempotencyKey);
  }

  async status(id: string, o: { timeoutMs?: number } & PaymentRef = {}): Promise<GatewayAnswer | undefined> {
    const r = await this.route(o);
    // Asked by the gateway's transaction id, BI-SNAP's product may not find it; the legacy API does.
    if (r.via === 'snap') return (await this.snapBi.status(r.kind, id)) ?? this.legacy.status(id, o);
    if (r.via === 'legacy') return this.legacy.status(id, o);
    return (await this.find(id))?.answer ?? this.legacy.status(id, o);
  }

  async cancel(id: string, o: PaymentRef = {}): Promise<ActionResult> {
    const r = await this.route(o);
    if (r.via === 'snap') return this.snapBi.cancel(r.kind, id);
    if (r.via === 'legacy') return this.legacy.cancel(id, o);
    const found = await this.find(id);
    return found ? this.snapBi.cancel(found.kind, id) : this.legacy.cancel(id);
  }

  /** BI-SNAP has no expire operation: a pending BI-SNAP transaction is ended by cancelling it. */
  async expire(id: string, o: PaymentRef = {}): Promise<ActionResult> {
    const r = await this.route(o);
    if (r.via === 'snap') return this.snapBi.cancel(r.kind, id);
    if (r.via === 'legacy') return this.legacy.expire(id, o);
    const found = await this.find(id);
    return found ? this.snapBi.cancel(found.kind, id) : this.legacy.expire(id);
  }

  async refund(id: string, refund: RefundOrder, o: PaymentRef = {}): Promise<Answered> {
    const r = await this.route(o);
    if (r.via === 'snap') return this.snapBi.refund(r.kind, id, refund);
    if (r.via === 'legacy') return this.legacy.refund(id, refund, o);
    const found = await this.find(id);
    return found ? this.snapBi.refund(found.kind, id, refund) : this.legacy.refund(id, refund);
  }

  verifyNotification(report: GatewayReport, signature: string): Promise<boolean> {
    return this.legacy.verifyNotification(report, signature);
  }
}
