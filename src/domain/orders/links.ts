/**
 * Payment links: the direct shape (`POST /api/payment-links`) and the ERP shape (`POST /createtransaksi`),
 * with their re-creation rules, resolving and deactivating.
 */
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import { AppError } from '../../platform/errors.js';
import { parseExpireAtText, resolveExpiry } from './expiry.js';
import { InputProblems } from './problems.js';
import { assertPrintableId, deriveMercantId, gatewayOrderIdFor, newPaymentLinkId } from './ids.js';
import {
  LINK_CUSTOMER_LIMITS,
  assertPageAmount,
  itemsTotal,
  normalizeCustomer,
  normalizeItems,
  parseNominal,
  parseOpenAmount,
  parseUsageLimit,
} from './input.js';
import type { DirectLinkInput, ErpLinkInput } from './schemas.js';
import { truncate, type Customer, type Item, type OpenAmount } from '../../gateway/order.js';
import {
  PAID_STATUSES,
  conflict,
  findOrderForCreate,
  insertOrFind,
  isReusableLink,
  isUnconfirmed,
  wasRefused,
} from './records.js';
import { pushPaymentLink } from './link-gateway.js';
import { requestHash } from './request-hash.js';
import { randomUUID } from 'node:crypto';
import { enqueueStatusChanged } from '../reports/record.js';
import { actorName, audit, type Actor } from '../audit.js';
import { maySee, requireRole } from '../operators/access.js';

/** Creating and looking up payment links. */
export type LinkDeps = Deps<'clock' | 'gateway' | 'logger' | 'runtimeConfig' | 'store'>;

/** 201 = created by this request; 200 = the link already existed. */
export interface LinkOutcome {
  created: boolean;
  tx: TransactionRecord;
}

interface Draft {
  orderId: string;
  gatewayOrderId: string;
  mercantId: string;
  attempt: number;
  nominal: number;
  items: Item[];
  customer?: Customer;
  expireAtText?: string;
  hash: string;
  request: Record<string, unknown>;
  /** Purchases the link takes; absent: 1. */
  usageLimit?: number;
  /** An open-amount link's bounds. */
  openAmount?: OpenAmount;
}

/** What a draft stores: the request, and the gateway body built from it (expiry fixed now). */
async function draftFields(services: Deps<'clock' | 'gateway' | 'runtimeConfig'>, d: Draft) {
  const settings = await services.runtimeConfig.current();
  const expiry = resolveExpiry(d.expireAtText, services.clock.now(), settings.links.default_expiry_minutes);
  const paymentLinkId = newPaymentLinkId();
  const gateway = services.gateway.paymentLinkRequest({
    gatewayOrderId: d.gatewayOrderId,
    paymentLinkId,
    nominal: d.nominal,
    items: d.items,
    customer: d.customer,
    expiry,
    enabledPayments: settings.links.enabled_payments,
    ...(d.usageLimit === undefined ? {} : { usageLimit: d.usageLimit }),
    ...(d.openAmount === undefined ? {} : { openAmount: d.openAmount }),
  });
  return {
    nominal: d.nominal,
    paymentLinkId,
    requestHash: d.hash,
    requestJson: JSON.stringify({ request: d.request, gateway }),
    expireAt: expiry.expireAt.toISOString(),
  };
}

/** Writes the record first, then asks the gateway; a concurrent twin resumes the same record. */
async function createFromDraft(services: LinkDeps, d: Draft): Promise<LinkOutcome> {
  const f = await draftFields(services, d);
  const { created, tx } = await insertOrFind(services.store, {
    id: randomUUID(),
    orderId: d.orderId,
    gatewayOrderId: d.gatewayOrderId,
    mercantId: d.mercantId,
    kind: 'payment_link',
    attempt: d.attempt,
    status: 'pending',
    paymentUrl: null,
    snapToken: null,
    gatewayJson: null,
    ...f,
  });
  if (!created) return existingOutcome(services, tx, d.hash);
  return { created: true, tx: await pushPaymentLink(services, tx, false) };
}

/**
 * The gateway refused this order's creation, so nothing exists there: a corrected request takes
 * the record over (once — a concurrent correction finds it pending and gets the 409).
 */
async function correctRefused(services: LinkDeps, tx: TransactionRecord, d: Draft): Promise<LinkOutcome> {
  const f = await draftFields(services, d);
  const now = await services.store.transactions.update(tx.id, { ...f, status: 'pending' }, { ifStatusIn: ['failed'] });
  if (now.requestHash !== d.hash || !isUnconfirmed(now))
    throw conflict(now, `order_id ${now.orderId} already exists with a different request.`);
  return { created: true, tx: await pushPaymentLink(services, now, false) };
}

/** Same request again: the existing link (200), or finish a creation that was left unconfirmed (201). */
async function existingOutcome(
  services: Deps<'gateway' | 'logger' | 'store'>,
  tx: TransactionRecord,
  hash: string,
): Promise<LinkOutcome> {
  if (tx.kind !== 'payment_link' || tx.requestHash !== hash)
    throw conflict(tx, `order_id ${tx.orderId} already exists with a different request.`);
  if (isUnconfirmed(tx)) return { created: true, tx: await pushPaymentLink(services, tx, true) };
  return { created: false, tx };
}

/** A fixed link's nominal: required, a positive whole number of rupiah. */
function fixedNominal(input: DirectLinkInput): number {
  if (input.nominal === undefined)
    throw new AppError('VALIDATION_FAILED', 'nominal is required (or amount_type "open" with its bounds).', {
      errors: [{ path: 'nominal', message: 'is required' }],
    });
  return parseNominal(input.nominal);
}

export async function createDirectLink(services: LinkDeps, input: DirectLinkInput): Promise<LinkOutcome> {
  const p = new InputProblems();
  const gatewayOrderId = p.take(() => gatewayOrderIdFor(input.order_id));
  const methods = (await services.runtimeConfig.current()).links.enabled_payments;
  const open = input.amount_type === 'open' ? p.take(() => parseOpenAmount(input, methods)) : undefined;
  // An open link's nominal is its max_nominal: the most any one purchase on it pays.
  const nominal = input.amount_type === 'open' ? open?.max : p.take(() => fixedNominal(input));
  if (input.amount_type !== 'open')
    for (const field of ['min_nominal', 'max_nominal', 'preset_nominal'] as const)
      if (input[field] !== undefined)
        p.take(() => {
          throw new AppError('OPEN_AMOUNT_INVALID', `${field} is taken only with amount_type "open".`, {
            errors: [{ path: field, message: 'is taken only with amount_type "open"' }],
          });
        });
  if (nominal !== undefined && open === undefined) p.take(() => assertPageAmount(nominal, methods));
  const customer = p.take(() => ({ c: normalizeCustomer(input.customer, LINK_CUSTOMER_LIMITS) }))?.c;
  const usageLimit = p.take(() => parseUsageLimit(input.usage_limit));
  // A malformed expire_at is a 400 even when the order already exists; one that has passed since is
  // not, when the very same request created the link (it is answered with that link).
  const parsedExpiry = input.expire_at === undefined ? undefined : parseExpireAtText(input.expire_at.trim());
  const expireAt = input.expire_at;
  if (expireAt !== undefined && !parsedExpiry) p.take(() => resolveExpiry(expireAt, services.clock.now(), 1));
  p.throwIfAny();
  if (gatewayOrderId === undefined || nominal === undefined || usageLimit === undefined) throw new AppError('INTERNAL');
  // A single-use link's request reads as it did before links could be reused, so its hash is unchanged.
  const request = {
    shape: 'direct',
    order_id: input.order_id,
    nominal,
    customer,
    expire_at: parsedExpiry?.toISOString(),
    ...(usageLimit === 1 ? {} : { usage_limit: usageLimit }),
    ...(open === undefined
      ? {}
      : {
          amount_type: 'open',
          min_nominal: open.min,
          max_nominal: open.max,
          ...(open.preset === undefined ? {} : { preset_nominal: open.preset }),
        }),
  };
  const hash = requestHash(request);
  const items: Item[] = open
    ? []
    : [{ id: 'nominal', name: truncate(`Payment ${input.order_id}`, 50), price: nominal, quantity: 1 }];
  const draft: Draft = {
    orderId: input.order_id,
    gatewayOrderId,
    mercantId: deriveMercantId(input.order_id),
    attempt: 1,
    nominal,
    items,
    customer,
    expireAtText: input.expire_at,
    hash,
    request,
    usageLimit,
    ...(open === undefined ? {} : { openAmount: open }),
  };
  const existing = await findOrderForCreate(services.store, input.order_id, gatewayOrderId);
  if (existing && existing.kind === 'payment_link' && existing.requestHash === hash && !isUnconfirmed(existing))
    return { created: false, tx: existing };
  if (input.expire_at !== undefined) resolveExpiry(input.expire_at, services.clock.now(), 1);
  if (
    existing &&
    existing.kind === 'payment_link' &&
    existing.requestHash !== hash &&
    existing.orderId === input.order_id &&
    wasRefused(existing)
  )
    return correctRefused(services, existing, draft);
  if (existing) return existingOutcome(services, existing, hash);
  return createFromDraft(services, draft);
}

function isActive(services: Deps<'clock'>, tx: TransactionRecord): boolean {
  return tx.status === 'pending' && (tx.expireAt === null || tx.expireAt > services.clock.now().toISOString());
}

/** The ERP-shape rules for an order that already has a record. Undefined → make a new attempt. */
async function erpExisting(
  services: Deps<'clock' | 'gateway' | 'logger' | 'store'>,
  tx: TransactionRecord,
  hash: string,
  explicit: boolean,
): Promise<LinkOutcome | undefined> {
  if (PAID_STATUSES.has(tx.status)) throw conflict(tx, `${tx.orderId} is already ${tx.status}.`);
  const same = tx.kind === 'payment_link' && tx.requestHash === hash;
  if (isUnconfirmed(tx) && (same || !wasRefused(tx))) {
    if (!same) throw conflict(tx, `The creation of ${tx.orderId} is still unconfirmed, with different items.`);
    return { created: true, tx: await pushPaymentLink(services, tx, true) };
  }
  if (isActive(services, tx)) {
    if (!same) throw conflict(tx, `An active link ${tx.orderId} with different items exists; deactivate it first.`);
    return { created: false, tx };
  }
  if (explicit)
    throw conflict(
      tx,
      `${tx.orderId} is ${tx.status === 'pending' ? 'expired' : tx.status}; send a new order_id or none.`,
    );
  return undefined;
}

/** The ERP request's fields, every problem of them refused in one answer. */
async function erpInput(services: Deps<'clock' | 'runtimeConfig'>, input: ErpLinkInput) {
  const p = new InputProblems();
  const mercantId = input.mercant_id.trim();
  p.take(() => {
    if (mercantId.length === 0)
      throw new AppError('VALIDATION_FAILED', 'mercant_id must not be empty.', {
        errors: [{ path: 'mercant_id', message: 'must not be empty' }],
      });
    assertPrintableId(mercantId, 'mercant_id');
    if (input.order_id === undefined) gatewayOrderIdFor(`${mercantId}:1`, 'mercant_id');
  });
  const orderId = input.order_id;
  if (orderId !== undefined) p.take(() => gatewayOrderIdFor(orderId));
  const items = p.take(() => normalizeItems(input.item));
  const nominal = items === undefined ? undefined : p.take(() => itemsTotal(items));
  const methods = (await services.runtimeConfig.current()).links.enabled_payments;
  if (nominal !== undefined) p.take(() => assertPageAmount(nominal, methods, 'item'));
  const customer = p.take(() => ({ c: normalizeCustomer(input.customer, LINK_CUSTOMER_LIMITS) }))?.c;
  const expireAt = input.expire_at;
  if (expireAt !== undefined) p.take(() => resolveExpiry(expireAt, services.clock.now(), 1));
  p.throwIfAny();
  if (items === undefined || nominal === undefined) throw new AppError('INTERNAL');
  return { mercantId, items, nominal, customer };
}

export async function createErpLink(services: LinkDeps, input: ErpLinkInput): Promise<LinkOutcome> {
  const { mercantId, items, nominal, customer } = await erpInput(services, input);
  // The contract's identity of an ERP request is the mercant_id and its items.
  const hash = requestHash({ shape: 'erp', mercant_id: mercantId, items });
  const request = {
    shape: 'erp',
    mercant_id: mercantId,
    order_id: input.order_id,
    items,
    customer,
    expire_at: input.expire_at,
  };
  const base = { mercantId, nominal, items, customer, expireAtText: input.expire_at, hash, request };
  for (let round = 0; round < 5; round++) {
    const latest = await services.store.transactions.latestForMercant(mercantId);
    if (input.order_id !== undefined) {
      const gatewayOrderId = gatewayOrderIdFor(input.order_id);
      const existing = await findOrderForCreate(services.store, input.order_id, gatewayOrderId);
      if (existing) {
        if (existing.mercantId !== mercantId)
          throw conflict(existing, `order_id ${input.order_id} belongs to mercant_id ${existing.mercantId}.`);
        const done = await erpExisting(services, existing, hash, true);
        if (done) return done;
      }
      return createFromDraft(services, {
        ...base,
        orderId: input.order_id,
        gatewayOrderId,
        attempt: (latest?.attempt ?? 0) + 1,
      });
    }
    if (latest) {
      const done = await erpExisting(services, latest, hash, false);
      if (done) return done;
    }
    const next = await nextAttempt(services, mercantId, (latest?.attempt ?? 0) + 1);
    const outcome = await createFromDraft(services, { ...base, ...next }).catch((err: unknown) => {
      // Lost a race for the same attempt number: decide again with the winner's record in view.
      if (err instanceof AppError && err.code === 'ORDER_CONFLICT' && round < 4) return undefined;
      throw err;
    });
    if (outcome) return outcome;
  }
  throw new AppError(
    'IDEMPOTENCY_IN_FLIGHT',
    `Another request for mercant_id ${mercantId} is being processed; retry shortly.`,
  );
}

/** `mercant_id:N`, skipping numbers whose id (or its sanitized form) is already taken. */
async function nextAttempt(
  services: Deps<'store'>,
  mercantId: string,
  first: number,
): Promise<{ orderId: string; gatewayOrderId: string; attempt: number }> {
  for (let n = first; n < first + 50; n++) {
    const orderId = `${mercantId}:${n}`;
    const gatewayOrderId = gatewayOrderIdFor(orderId, 'mercant_id');
    const taken =
      (await services.store.transactions.findByOrderId(orderId)) ??
      (await services.store.transactions.findByGatewayOrderId(gatewayOrderId));
    if (!taken) return { orderId, gatewayOrderId, attempt: n };
  }
  throw new AppError('ORDER_CONFLICT', `No free attempt number for mercant_id ${mercantId}.`);
}

/**
 * By the caller's order_id, else by gateway_order_id, else by the gateway's transaction_id, in the
 * store's account. With `actor`, an account the actor may not see has no payments at all.
 */
export async function findTransaction(
  services: Deps<'store'>,
  id: string,
  actor?: Actor,
): Promise<TransactionRecord | undefined> {
  if (actor && !maySee(actor, services.store.account)) return undefined;
  const t = services.store.transactions;
  return (await t.findByOrderId(id)) ?? (await t.findByGatewayOrderId(id)) ?? (await t.findByGatewayTransactionId(id));
}

export async function resolveLink(services: Deps<'store'>, id: string, actor?: Actor): Promise<TransactionRecord> {
  const tx = await findTransaction(services, id, actor);
  if (!tx || tx.kind !== 'payment_link') throw new AppError('NOT_FOUND', `No payment link ${JSON.stringify(id)}.`);
  return tx;
}

/** The most purchases a link's answer and page list. */
export const LINK_PURCHASES_SHOWN = 1000;

/** A link's purchases (oldest first, at most LINK_PURCHASES_SHOWN); undefined for a single-use link or another payment. */
export async function linkPurchases(
  services: Deps<'store'>,
  link: TransactionRecord,
): Promise<TransactionRecord[] | undefined> {
  if (!isReusableLink(link)) return undefined;
  return services.store.transactions.listLinkPurchases(link.orderId, LINK_PURCHASES_SHOWN);
}

/** A link used more than once and its purchases (oldest first); undefined purchases for a single-use link. */
export async function resolveLinkWithPurchases(
  services: Deps<'store'>,
  id: string,
): Promise<{ link: TransactionRecord; purchases?: TransactionRecord[] }> {
  const link = await resolveLink(services, id);
  const purchases = await linkPurchases(services, link);
  return purchases === undefined ? { link } : { link, purchases };
}

/** Deactivates a pending link at the gateway and marks it cancelled; already closed links answer as they are. */
export async function cancelLink(
  services: Deps<'clock' | 'gateway' | 'logger' | 'outbox' | 'store'>,
  id: string,
  actor: Actor,
): Promise<TransactionRecord> {
  requireRole(actor, 'finance');
  const tx = await resolveLink(services, id, actor);
  if (PAID_STATUSES.has(tx.status))
    throw conflict(tx, `${tx.orderId} is already ${tx.status} and cannot be deactivated.`);
  if (tx.status !== 'pending') return tx;
  audit(
    services,
    { actor, action: 'link_cancel', subject: tx.orderId, outcome: 'requested' },
    `${actorName(actor)} asked to deactivate the link ${tx.orderId}`,
    { order_id: tx.orderId, account: tx.account, mercant_id: tx.mercantId },
  );
  return closeUnusedLink(services, tx, 'cancelled');
}

/**
 * A payment link nobody bought: deactivated at the gateway (an unconfirmed creation may exist there;
 * deleting an unknown link is harmless), then closed here — only while it is still pending — with
 * an ERP event, like any other status change.
 */
export async function closeUnusedLink(
  services: Deps<'clock' | 'gateway' | 'outbox' | 'store'>,
  tx: TransactionRecord,
  status: 'cancelled' | 'expired',
): Promise<TransactionRecord> {
  await services.gateway.deletePaymentLink(tx.gatewayOrderId);
  const result = await services.store.transaction(async (db) => {
    const current = await db.transactions.findForUpdate({ id: tx.id });
    if (!current || current.status !== 'pending') return { record: current ?? tx };
    const now = services.clock.now();
    const updated = await db.transactions.update(tx.id, {
      status,
      statusVersion: current.statusVersion + 1,
      lastEventAt: now.toISOString(),
    });
    return { record: updated, eventId: await enqueueStatusChanged(db, updated, updated.nominal, now) };
  });
  if (result.eventId) services.outbox.wake();
  return result.record;
}
