/**
 * The stored side of creating something at the gateway: the record (with the id mapping) is written
 * BEFORE the gateway call, so a timeout after the gateway acted can be recovered instead of repeated.
 */
import { AppError } from '../../platform/errors.js';
import { setSpanAttributes } from '../../platform/tracing.js';
import { GatewayError, type Refusal } from '../../gateway/port.js';
import { UniqueViolationError, type Store } from '../../storage/contract.js';
import type { OpenAmount } from '../../gateway/order.js';
import {
  type NewTransaction,
  type PaymentStatus,
  type TransactionPatch,
  type TransactionRecord,
} from '../../model/payment.js';

/** Statuses that mean the order was paid at some point; such an order is never re-created. */
export const PAID_STATUSES: ReadonlySet<PaymentStatus> = new Set([
  'paid',
  'challenge',
  'refunded',
  'partially_refunded',
  'chargeback',
]);

/** Creation not yet confirmed by the gateway: the call timed out, failed, or is still running. */
export function isUnconfirmed(tx: TransactionRecord): boolean {
  if (tx.kind === 'payment_link') return tx.paymentUrl === null;
  if (tx.kind === 'snap') return tx.snapToken === null;
  if (tx.kind === 'charge') return tx.gatewayTransactionId === null && tx.gatewayJson === null;
  return false;
}

/**
 * How many purchases a payment link takes, as its creating request asked (1 for anything else, and
 * for a link made before links could be reused). Above 1, each purchase is a payment of its own.
 */
export function linkUsageLimit(tx: TransactionRecord): number {
  if (tx.kind !== 'payment_link' || tx.requestJson === null) return 1;
  try {
    const stored: unknown = JSON.parse(tx.requestJson);
    const limit =
      typeof stored === 'object' && stored !== null && 'request' in stored
        ? (stored.request as { usage_limit?: unknown }).usage_limit
        : undefined;
    return typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 1 ? limit : 1;
  } catch {
    return 1;
  }
}

/** The creating request of a payment link, as stored; undefined for anything else. */
function linkRequest(tx: TransactionRecord): Record<string, unknown> | undefined {
  if (tx.kind !== 'payment_link' || tx.requestJson === null) return undefined;
  try {
    const stored: unknown = JSON.parse(tx.requestJson);
    return typeof stored === 'object' && stored !== null && 'request' in stored && isRecord(stored.request)
      ? stored.request
      : undefined;
  } catch {
    return undefined;
  }
}

const wholeRupiah = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/** The bounds of an open-amount payment link, as its creating request set them; undefined for a fixed one. */
export function linkOpenAmount(tx: TransactionRecord): OpenAmount | undefined {
  const r = linkRequest(tx);
  if (r?.amount_type !== 'open' || !wholeRupiah(r.min_nominal) || !wholeRupiah(r.max_nominal)) return undefined;
  return wholeRupiah(r.preset_nominal)
    ? { min: r.min_nominal, max: r.max_nominal, preset: r.preset_nominal }
    : { min: r.min_nominal, max: r.max_nominal };
}

/**
 * A payment link whose purchases are payments of their own: one used more than once, and every
 * open-amount link (its amount is known only per purchase, so no purchase can be the link itself).
 */
export function isReusableLink(tx: TransactionRecord): boolean {
  return linkUsageLimit(tx) > 1 || linkOpenAmount(tx) !== undefined;
}

/** The gateway definitely refused the creation (nothing exists there); a retry may try again. */
export function wasRefused(tx: TransactionRecord): boolean {
  return isUnconfirmed(tx) && tx.status === 'failed';
}

/**
 * Records what the gateway answered to a creation: `patch` (identifiers, URLs) always, and the
 * status back to pending only when the record still says pending or failed — a notification that
 * arrived during the call (paid, expired…) is never undone by this older view.
 */
export async function recordCreated(
  store: Store,
  tx: TransactionRecord,
  patch: TransactionPatch,
  transactionStatus?: string | null,
): Promise<TransactionRecord> {
  const revive: TransactionPatch =
    transactionStatus === undefined ? { status: 'pending' } : { status: 'pending', transactionStatus };
  // One statement, so the revival is decided against the status as stored at that moment.
  return store.transactions.update(tx.id, patch, { whileStatusIn: { statuses: ['pending', 'failed'], patch: revive } });
}

/** The gateway refused the creation: failed, unless a notification moved the record meanwhile. */
export async function recordRefused(store: Store, tx: TransactionRecord): Promise<void> {
  await store.transactions.update(tx.id, { status: 'failed' }, { ifStatusIn: ['pending'] });
}

/** Records the refusal (see `recordRefused`), then answers with it (502, the gateway's code and message). */
export async function refusedCreation(store: Store, tx: TransactionRecord, refusal: Refusal): Promise<never> {
  await recordRefused(store, tx);
  throw GatewayError.refused(refusal);
}

export function collision(orderId: string, other: TransactionRecord): AppError {
  return new AppError(
    'ORDER_ID_COLLISION',
    `order_id ${JSON.stringify(orderId)} and the existing ${JSON.stringify(other.orderId)} both become gateway order id ${other.gatewayOrderId}.`,
    {
      data: { gateway_order_id: other.gatewayOrderId },
    },
  );
}

export function conflict(tx: TransactionRecord, detail: string): AppError {
  return new AppError('ORDER_CONFLICT', detail, {
    data: {
      order_id: tx.orderId,
      gateway_order_id: tx.gatewayOrderId,
      mercant_id: tx.mercantId,
      current_status: tx.status,
    },
  });
}

/** The record for this order id; a different order id already holding the gateway id → 409 collision. */
async function findForCreate(
  store: Store,
  orderId: string,
  gatewayOrderId: string,
): Promise<TransactionRecord | undefined> {
  const mine = await findOrderForCreate(store, orderId, gatewayOrderId);
  if (mine) return mine;
  const other = await store.transactions.findByGatewayOrderId(gatewayOrderId);
  if (other) throw collision(orderId, other);
  return undefined;
}

/**
 * The record for this order id, for a creation that inserts next with `insertOrFind`: a different
 * order id holding the gateway id is found by the insert's unique index instead (`insertOrFind`
 * answers the same 409 collision), so a new order costs one lookup, not two — on PostgreSQL one
 * round trip fewer. Trade-off: a collision costs a refused insert (on SQLite a write transaction
 * rolled back; on PostgreSQL a unique-violation line in the server's log).
 */
export async function findOrderForCreate(
  store: Store,
  orderId: string,
  gatewayOrderId: string,
): Promise<TransactionRecord | undefined> {
  // Every creation (link, charge, Snap) looks here first: its trace is named after the order.
  setSpanAttributes({
    'paylink.account': store.account,
    'paylink.order_id': orderId,
    'paylink.gateway_order_id': gatewayOrderId,
  });
  return store.transactions.findByOrderId(orderId);
}

/** Inserts, or returns the record a concurrent request inserted first (`created: false`). */
export async function insertOrFind(
  store: Store,
  t: NewTransaction,
): Promise<{ created: boolean; tx: TransactionRecord }> {
  try {
    return { created: true, tx: await store.transactions.insert(t) };
  } catch (err) {
    if (!(err instanceof UniqueViolationError)) throw err;
    const existing = await findForCreate(store, t.orderId, t.gatewayOrderId);
    if (!existing) throw err;
    return { created: false, tx: existing };
  }
}

/** What was stored at creation: the normalized request and the exact gateway body. */
export interface StoredRequest {
  request: Record<string, unknown>;
  gateway: Record<string, unknown>;
}

export function storedRequest(tx: TransactionRecord): StoredRequest {
  const parsed: unknown = tx.requestJson ? JSON.parse(tx.requestJson) : undefined;
  if (parsed !== null && typeof parsed === 'object' && 'request' in parsed && 'gateway' in parsed) {
    const { request, gateway } = parsed;
    if (isRecord(request) && isRecord(gateway)) return { request, gateway };
  }
  throw new Error(`transaction ${tx.id} has no stored request`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
