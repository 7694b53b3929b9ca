/**
 * One account's gateway when BI-SNAP carries some of its payment methods: a charge of a type that
 * `gateway.snap_bi.methods` lists goes through BI-SNAP, every other call through the legacy
 * adapter. Status, cancel, expire and refund ask the BI-SNAP products of the listed methods first
 * (a legacy transaction is unknown there), then the legacy API. With no method listed (the
 * default) it is the legacy gateway, call for call.
 */
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
    const methods = (await this.runtimeConfig()).gateway.snap_bi.methods;
    if (methods.some((m) => m === order.paymentType)) return this.snapBi.charge(order);
    return this.legacy.charge(order, idempotencyKey);
  }

  async status(id: string, o?: { timeoutMs?: number }): Promise<GatewayAnswer | undefined> {
    return (await this.find(id))?.answer ?? this.legacy.status(id, o);
  }

  async cancel(id: string): Promise<ActionResult> {
    const found = await this.find(id);
    return found ? this.snapBi.cancel(found.kind, id) : this.legacy.cancel(id);
  }

  /** BI-SNAP has no expire operation: a pending BI-SNAP transaction is ended by cancelling it. */
  async expire(id: string): Promise<ActionResult> {
    const found = await this.find(id);
    return found ? this.snapBi.cancel(found.kind, id) : this.legacy.expire(id);
  }

  async refund(id: string, refund: RefundOrder): Promise<Answered> {
    const found = await this.find(id);
    return found ? this.snapBi.refund(found.kind, id, refund) : this.legacy.refund(id, refund);
  }

  verifyNotification(report: GatewayReport, signature: string): Promise<boolean> {
    return this.legacy.verifyNotification(report, signature);
  }
}
