/** Transactions as the payment-link endpoints would create them, for tests that only need the record. */
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/storage/contract.js';
import type { KyselyBackedStore } from '../../src/storage/kysely/store.js';
import type { NewTransaction, PaymentStatus, TransactionRecord } from '../../src/model/payment.js';
import type { RuntimeConfigOverrides, RuntimeConfigService } from '../../src/config/runtime.js';

export function gatewayIdOf(orderId: string): string {
  return orderId.replace(/[^A-Za-z0-9\-_~.]/g, '.');
}

export function newTransaction(over: Partial<NewTransaction> & { orderId: string }): NewTransaction {
  const orderId = over.orderId;
  return {
    id: randomUUID(),
    gatewayOrderId: gatewayIdOf(orderId),
    mercantId: orderId.split(':')[0] ?? orderId,
    kind: 'payment_link',
    attempt: 1,
    nominal: 150_000,
    status: 'pending',
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: '2099-01-01T00:00:00.000Z',
    ...over,
  };
}

export function seedTransaction(
  store: Store,
  over: Partial<NewTransaction> & { orderId: string },
): Promise<TransactionRecord> {
  return store.transactions.insert(newTransaction(over));
}

/** Merges into the stored runtime overrides (section by section), as `POST /api/config` would. */
/** A payment of `amount` made `createdHoursAgo` before `now`, paid `paidMinutesAfter` it was made (settled then, Jakarta time) or never. */
export async function seedPaymentAt(
  store: KyselyBackedStore,
  now: Date,
  orderId: string,
  o: { status: PaymentStatus; type: string; createdHoursAgo: number; paidMinutesAfter?: number; amount: number },
): Promise<void> {
  const t = await seedTransaction(store, { orderId, nominal: o.amount });
  const created = new Date(now.getTime() - o.createdHoursAgo * 3_600_000);
  const paidAt = o.paidMinutesAfter === undefined ? null : new Date(created.getTime() + o.paidMinutesAfter * 60_000);
  await store.transactions.update(t.id, {
    status: o.status,
    paymentType: o.type,
    paidAmount: paidAt ? o.amount : null,
    settlementTime: paidAt ? `${new Date(paidAt.getTime() + 7 * 3_600_000).toISOString().slice(0, 19)}+07:00` : null,
  });
  await store.db
    .updateTable('transactions')
    .set({ created_at: created.toISOString() })
    .where('id', '=', t.id)
    .execute();
}

export async function patchRuntimeConfig(
  runtimeConfig: RuntimeConfigService,
  patch: RuntimeConfigOverrides,
): Promise<void> {
  const { document, version } = await runtimeConfig.overrides();
  const merged: RuntimeConfigOverrides = { ...document };
  for (const k of ['gateway', 'erp', 'links', 'alerts', 'reconcile'] as const) {
    const add = patch[k];
    if (add) Object.assign(merged, { [k]: { ...document[k], ...add } });
  }
  if (!(await runtimeConfig.save(merged, version, 'test'))) throw new Error('runtime config changed concurrently');
}
