import { Engine } from './engine.js';
import { IdempotencyStore } from './idempotency.js';
import type { Notifier } from './notifier.js';
import {
  Ledger,
  type MerchantSettings,
  type PayAccount,
  type PaymentLink,
  type SnapSession,
  type Txn,
} from './state.js';

/**
 * One merchant of the simulated gateway: its keys and MID, and a ledger of its own, so an order id
 * is unique per merchant (as at the gateway) and the same order id in two merchants is two
 * transactions. Idempotency keys are the merchant's too.
 */
export class Merchant {
  readonly ledger = new Ledger();
  readonly idempotency = new IdempotencyStore();
  readonly engine: Engine;

  constructor(
    readonly settings: MerchantSettings,
    notifier: Notifier,
    baseUrl: () => string,
  ) {
    this.engine = new Engine(this.ledger, notifier, baseUrl, settings);
  }

  get id(): string {
    return this.settings.merchantId;
  }

  get serverKey(): string {
    return this.settings.serverKey;
  }

  /** Whether the control API's id (order id, transaction id, a link's order id, a Snap token or order) is this merchant's. */
  knows(id: string): boolean {
    const l = this.ledger;
    return l.findTxn(id) !== undefined || l.linkByOrder.has(id) || l.snaps.has(id) || l.snapByOrder.has(id);
  }

  clear(): void {
    this.ledger.clear();
    this.idempotency.clear();
  }
}

export interface Owned<T> {
  merchant: Merchant;
  item: T;
}

/**
 * Every merchant, the first being the default one. The server key picks the merchant of a gateway
 * call; the pages, found by a transaction id, a Snap token or a payment link id, belong to the
 * merchant that holds them (those ids are unique across merchants: UUIDs, and link ids are
 * refused when any merchant has taken them, because the page URL names no merchant).
 */
export class Merchants {
  private readonly list: Merchant[];

  constructor(
    private readonly primary: Merchant,
    rest: readonly Merchant[],
  ) {
    this.list = [primary, ...rest];
  }

  /** A merchant added while running (after the checks of `merchantListProblems`). */
  add(merchant: Merchant): void {
    this.list.push(merchant);
  }

  /** Removes a merchant other than the default one; its ledger goes with it. */
  remove(merchant: Merchant): void {
    const i = this.list.indexOf(merchant);
    if (i > 0) this.list.splice(i, 1);
  }

  all(): readonly Merchant[] {
    return this.list;
  }

  /** The merchant of `SIMULATOR_SERVER_KEY` / the `serverKey` option. */
  defaultMerchant(): Merchant {
    return this.primary;
  }

  byServerKey(key: string | undefined): Merchant | undefined {
    return key === undefined ? undefined : this.list.find((m) => m.serverKey === key);
  }

  byClientKey(key: unknown): Merchant | undefined {
    return typeof key === 'string' ? this.list.find((m) => m.settings.clientKey === key) : undefined;
  }

  byId(merchantId: string): Merchant | undefined {
    return this.list.find((m) => m.id === merchantId);
  }

  txnById(transactionId: string): Owned<Txn> | undefined {
    return this.first((m) => m.ledger.txns.get(transactionId));
  }

  snap(token: string): Owned<SnapSession> | undefined {
    return this.first((m) => m.ledger.snaps.get(token));
  }

  link(paymentLinkId: string): Owned<PaymentLink> | undefined {
    return this.first((m) => m.ledger.links.get(paymentLinkId));
  }

  /** The GoPay account whose activation link (`gpar_…`) the customer opened. */
  payAccountByLink(linkId: string): Owned<PayAccount> | undefined {
    return this.first((m) => [...m.ledger.payAccounts.values()].find((a) => a.link_id === linkId));
  }

  expireDue(now: number): void {
    for (const m of this.list) m.engine.expireDue(now);
  }

  clear(): void {
    for (const m of this.list) m.clear();
  }

  private first<T>(find: (m: Merchant) => T | undefined): Owned<T> | undefined {
    for (const merchant of this.list) {
      const item = find(merchant);
      if (item !== undefined) return { merchant, item };
    }
    return undefined;
  }
}
