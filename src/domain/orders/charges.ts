/**
 * Core API charges, Snap tokens and status checks. Like links, the record (with the id mapping) is
 * stored before the gateway call; a retry of an unconfirmed creation looks before it leaps.
 */
import { randomUUID } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { Carrier, TransactionKind, TransactionRecord } from '../../model/payment.js';
import { AppError } from '../../platform/errors.js';
import { expiryTime, type GatewayAnswer } from '../../gateway/answer.js';
import { resolveExpiry, type Expiry } from './expiry.js';
import { InputProblems } from './problems.js';
import { deriveMercantId, gatewayOrderIdFor } from './ids.js';
import {
  CORE_CUSTOMER_LIMITS,
  assertChargeAmount,
  assertPageAmount,
  itemsTotal,
  normalizeCustomer,
  normalizeItems,
  parseNominal,
} from './input.js';
import type { ChargeInput, CustomerInput, ItemInput, SnapInput } from './schemas.js';
import type { Customer, Item } from '../../gateway/order.js';
import {
  conflict,
  findOrderForCreate,
  insertOrFind,
  isUnconfirmed,
  recordCreated,
  refusedCreation,
  wasRefused,
} from './records.js';
import { MAX_CHARGE_EXPIRY_MINUTES, methodObject } from '../../gateway/charge-methods.js';
import { chargeMethod } from '../../gateway/amount-limits.js';
import { requestHash } from './request-hash.js';
import { mapGatewayStatus } from '../../gateway/status.js';
import { ingestGatewayReport } from '../reports/ingest.js';
import { refreshFromGateway } from '../reports/refresh.js';
import { answerFor } from '../reports/trust.js';
import { gatewayTimeToIso } from '../../gateway/time.js';
import { findTransaction } from './links.js';
import { enabledPaymentsProblem } from '../../gateway/payment-methods.js';
import type { IngestDeps } from '../reports/ingest.js';
import type { RefreshDeps } from '../reports/refresh.js';
import { actorName, audit, type Actor } from '../audit.js';

const SNAP_MAX_MINUTES = 7 * 24 * 60;

interface Common {
  orderId: string;
  gatewayOrderId: string;
  nominal: number;
  items?: Item[];
  customer?: Customer;
  expiry?: Expiry;
}

function common(
  services: Deps<'clock'>,
  input: {
    order_id: string;
    nominal: number | string;
    items?: ItemInput[];
    customer?: CustomerInput;
    expire_at?: string;
  },
  maxMinutes: number,
): Common {
  const p = new InputProblems();
  const gatewayOrderId = p.take(() => gatewayOrderIdFor(input.order_id));
  const nominal = p.take(() => parseNominal(input.nominal));
  const itemList = input.items;
  const items = itemList === undefined ? undefined : p.take(() => normalizeItems(itemList, 'items'));
  if (items && nominal !== undefined)
    p.take(() => {
      if (itemsTotal(items, 'items') !== nominal)
        throw new AppError('AMOUNT_INVALID', 'nominal must equal Σ price × quantity of items.', {
          errors: [{ path: 'nominal', message: 'must equal the item sum' }],
        });
    });
  const customer = p.take(() => ({ c: normalizeCustomer(input.customer, CORE_CUSTOMER_LIMITS) }))?.c;
  const expireAt = input.expire_at;
  const expiry = expireAt === undefined ? undefined : p.take(() => resolveExpiry(expireAt, services.clock.now(), 1));
  if (expiry && expiry.durationMinutes > maxMinutes)
    p.take(() => {
      throw new AppError('EXPIRY_INVALID', `expire_at must lie within ${maxMinutes / 1440} days.`, {
        errors: [{ path: 'expire_at', message: 'too far in the future' }],
      });
    });
  p.throwIfAny();
  if (gatewayOrderId === undefined || nominal === undefined) throw new AppError('INTERNAL');
  return { orderId: input.order_id, gatewayOrderId, nominal, items, customer, expiry };
}

/** The stored record for a new order, or the same order's existing record (same request) / 409 (different). */
async function recordFor(
  services: Deps<'clock' | 'store'>,
  c: Common,
  kind: TransactionKind,
  hash: string,
  request: Record<string, unknown>,
  carrier: Carrier = 'legacy',
): Promise<{ tx: TransactionRecord; fresh: boolean }> {
  // Another order id holding the gateway order id is found by the insert's unique index below
  // (`insertOrFind`: the same 409 collision), so a new order costs one lookup.
  const existing = await findOrderForCreate(services.store, c.orderId, c.gatewayOrderId);
  const expireAt = (c.expiry?.expireAt ?? new Date(services.clock.now().getTime() + 24 * 3_600_000)).toISOString();
  const requestJson = JSON.stringify({ request, gateway: {} });
  const check = (tx: TransactionRecord) => {
    if (tx.kind !== kind || tx.requestHash !== hash)
      throw conflict(tx, `order_id ${tx.orderId} already exists with a different request.`);
    return { tx, fresh: false };
  };
  if (
    existing &&
    existing.kind === kind &&
    existing.requestHash !== hash &&
    existing.orderId === c.orderId &&
    wasRefused(existing)
  ) {
    // The gateway refused it, so nothing exists there: a corrected request takes the record over
    // (once — a concurrent correction finds it pending and gets the 409).
    return check(
      await services.store.transactions.update(
        existing.id,
        { nominal: c.nominal, requestHash: hash, requestJson, expireAt, status: 'pending', carrier },
        { ifStatusIn: ['failed'] },
      ),
    );
  }
  if (existing) return check(existing);
  const { created, tx } = await insertOrFind(services.store, {
    id: randomUUID(),
    orderId: c.orderId,
    gatewayOrderId: c.gatewayOrderId,
    mercantId: deriveMercantId(c.orderId),
    kind,
    attempt: 1,
    nominal: c.nominal,
    status: 'pending',
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: hash,
    requestJson,
    gatewayJson: null,
    expireAt,
    carrier,
  });
  return created ? { tx, fresh: true } : check(tx);
}

/**
 * The gateway's Idempotency-Key (≤ 46 characters) for creating `tx`: the same request retried
 * after a timeout reuses it; a corrected request after a refusal gets a new one, since the
 * gateway would answer it with the remembered refusal.
 */
function gatewayKey(prefix: 'c' | 's', tx: TransactionRecord): string {
  return `${prefix}${(tx.requestHash ?? '').slice(0, 8)}${tx.id.replace(/-/g, '')}`;
}

function utcIso(iso: string | null): string | null {
  return iso === null ? null : new Date(iso).toISOString();
}

/** Identifiers from the gateway's answer; a status other than pending goes through the status machine. */
async function applyCharge(
  services: IngestDeps,
  tx: TransactionRecord,
  res: GatewayAnswer,
): Promise<TransactionRecord> {
  const { signature_key: _omit, ...kept } = res;
  let t = await recordCreated(
    services.store,
    tx,
    {
      gatewayTransactionId: res.transaction_id ?? null,
      paymentType: res.payment_type ?? null,
      gatewayJson: JSON.stringify(kept),
      // Stored times are UTC ISO text (compared as text by the sweeps), never the gateway's +07:00.
      expireAt: utcIso(gatewayTimeToIso(expiryTime(res))) ?? tx.expireAt,
    },
    res.transaction_status ?? null,
  );
  const mapped = mapGatewayStatus(res.transaction_status, res.fraud_status);
  const bound = answerFor(res, t);
  if (mapped !== undefined && mapped !== 'pending' && bound.ok) {
    t = (await ingestGatewayReport(services, bound.report, 'status_check', { transaction: t })).transaction;
  }
  return t;
}

/** A charge: the record, and the gateway's answer about it (its method details: VA numbers, QR string…). */
export interface ChargeOutcome {
  /** False when the same request was answered before (the stored answer is given again). */
  created: boolean;
  tx: TransactionRecord;
  answer: GatewayAnswer;
}

export async function createCharge(services: RefreshDeps, input: ChargeInput): Promise<ChargeOutcome> {
  const c = common(services, input, MAX_CHARGE_EXPIRY_MINUTES);
  const method = methodObject(input);
  assertChargeAmount(c.nominal, chargeMethod(input));
  const hash = requestHash({
    shape: 'charge',
    order_id: input.order_id,
    nominal: c.nominal,
    payment_type: input.payment_type,
    method,
    items: c.items,
    customer: c.customer,
    expire_at: c.expiry?.expireAt.toISOString(),
  });
  // The card token is a credential for one charge: it is hashed, never stored.
  const stored = {
    shape: 'charge',
    order_id: input.order_id,
    payment_type: input.payment_type,
    items: c.items,
    customer: c.customer,
  };
  // Decided once, with the record: a retry goes through the API the first attempt used.
  const carrier = await services.gateway.carrierFor(input.payment_type);
  const { tx, fresh } = await recordFor(services, c, 'charge', hash, stored, carrier);
  if (!fresh && !isUnconfirmed(tx)) {
    const last: unknown = tx.gatewayJson ? JSON.parse(tx.gatewayJson) : {};
    return { created: false, tx, answer: { status_code: '200', ...(last as object) } };
  }
  if (!fresh) {
    // A retry after a timeout: the first call may have charged; adopt what the gateway has.
    const known = await services.gateway.status(tx.gatewayOrderId, {
      carrier: tx.carrier,
      paymentType: input.payment_type,
    });
    if (known) return { created: true, tx: await applyCharge(services, tx, known), answer: known };
  }
  const order = {
    gatewayOrderId: c.gatewayOrderId,
    nominal: c.nominal,
    paymentType: input.payment_type,
    method,
    items: c.items,
    customer: c.customer,
    expiry: c.expiry,
    carrier: tx.carrier,
  };
  const res = await services.gateway.charge(order, gatewayKey('c', tx));
  if (res.kind === 'refused') return refusedCreation(services.store, tx, res.refusal);
  return { created: true, tx: await applyCharge(services, tx, res.answer), answer: res.answer };
}

/** A Snap token: the record holds the token and the payment page URL. `created` as for a charge. */
export async function createSnapToken(
  services: Deps<'clock' | 'gateway' | 'runtimeConfig' | 'store'>,
  input: SnapInput,
): Promise<{ created: boolean; tx: TransactionRecord }> {
  const c = common(services, input, SNAP_MAX_MINUTES);
  const enabled = input.enabled_payments ?? [];
  const methodsProblem = enabledPaymentsProblem(enabled, 'enabled_payments');
  if (methodsProblem)
    throw new AppError('VALIDATION_FAILED', `enabled_payments ${methodsProblem.message}.`, {
      errors: [methodsProblem],
    });
  assertPageAmount(
    c.nominal,
    enabled.length > 0 ? enabled : (await services.runtimeConfig.current()).links.enabled_payments,
  );
  const hash = requestHash({
    shape: 'snap',
    order_id: input.order_id,
    nominal: c.nominal,
    items: c.items,
    customer: c.customer,
    expire_at: c.expiry?.expireAt.toISOString(),
    enabled_payments: enabled,
  });
  const { tx, fresh } = await recordFor(services, c, 'snap', hash, {
    shape: 'snap',
    order_id: input.order_id,
    items: c.items,
    customer: c.customer,
    enabled_payments: enabled,
  });
  if (!fresh && !isUnconfirmed(tx)) return { created: false, tx };
  const settings = await services.runtimeConfig.current();
  const methods = enabled.length > 0 ? enabled : settings.links.enabled_payments;
  const order = {
    gatewayOrderId: c.gatewayOrderId,
    nominal: c.nominal,
    items: c.items,
    customer: c.customer,
    expiry: c.expiry,
    enabledPayments: methods,
  };
  // Before a method is picked the gateway lets an order id ask again: the new token replaces a lost one.
  const res = await services.gateway.createSnap(order, gatewayKey('s', tx));
  if (res.kind === 'refused') return refusedCreation(services.store, tx, res.refusal);
  return {
    created: true,
    tx: await recordCreated(services.store, tx, {
      snapToken: res.token,
      paymentUrl: res.redirectUrl,
      gatewayJson: res.answerJson,
    }),
  };
}

/**
 * Asks the gateway and runs the answer through the status machine; unknown id → 404. An
 * operator's check is audited; the ERP's are not, since it polls this (its requests are logged).
 */
export async function paymentStatus(services: RefreshDeps, id: string, actor: Actor): Promise<TransactionRecord> {
  const tx = await findTransaction(services, id, actor);
  if (!tx) throw new AppError('NOT_FOUND', `No payment ${JSON.stringify(id)}.`);
  if (actor.kind === 'operator') {
    audit(
      services,
      { actor, action: 'payment_check', subject: tx.orderId, outcome: 'requested' },
      `${actorName(actor)} asked the gateway for the status of ${tx.orderId}`,
      { order_id: tx.orderId },
    );
  }
  const { transaction } = await refreshFromGateway(services, tx);
  return transaction;
}
