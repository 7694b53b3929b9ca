/**
 * Confirming a gateway report before anything is recorded: a notification's signature, and — when
 * it must be confirmed — the gateway's status API about its signed order id. Reads only; what the
 * verdict leads to is recorded by the ingest (ingest.ts).
 */
import type { Deps } from '../../types.js';
import { AppError } from '../../platform/errors.js';
import { mustConfirmNotifications } from '../../config/runtime.js';
import type { RuntimeConfig } from '../../model/runtime-config.js';
import { GatewayError } from '../../gateway/port.js';
import { SIGNED_FIELDS, parseReport, purchaseBases, type GatewayReport } from '../../gateway/report.js';
import type { GatewayAnswer } from '../../gateway/answer.js';
import { confirmNotification, type TrustedReport } from './trust.js';
import { storedReport } from './dedupe.js';
import { linkAmong, purchasedLink } from './resolve.js';
import { linkOpenAmount } from '../orders/records.js';
import type { OpenAmount } from '../../gateway/order.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { VersionedTransaction } from '../../storage/contract.js';

/** A notification whose signature verified, with the unsigned fields whose NUL characters were replaced. */
export interface VerifiedNotification {
  report: GatewayReport;
  replaced: string[];
}

/**
 * A notification body parsed and its signature verified by the gateway (Midtrans: SHA-512 over the
 * exact strings, constant time). A missing signature or a missing or NUL-carrying signed field is
 * refused before the signature is checked.
 */
export async function verifiedNotification(
  services: Deps<'gateway'>,
  raw: Record<string, unknown>,
): Promise<VerifiedNotification> {
  if (typeof raw.signature_key !== 'string' || raw.signature_key === '')
    throw new AppError('SIGNATURE_INVALID', 'The notification carries no signature_key.');
  const { report, missing, replaced } = parseReport(raw);
  if (!report)
    throw new AppError('VALIDATION_FAILED', 'The notification lacks required fields.', {
      errors: missing.map((m) => ({ path: m, message: 'is required (a string)' })),
    });
  const signedNul = replaced.filter((f) => (SIGNED_FIELDS as readonly string[]).includes(f));
  if (signedNul.length > 0) {
    throw new AppError('VALIDATION_FAILED', 'A signed field contains a NUL character.', {
      errors: signedNul.map((f) => ({ path: f, message: 'must not contain NUL (U+0000)' })),
    });
  }
  if (!(await services.gateway.verifyNotification(report, raw.signature_key)))
    throw new AppError('SIGNATURE_INVALID', 'The notification signature does not verify.');
  return { report, replaced };
}

/** Whether a verified notification must be confirmed with the status API before it is applied. */
export async function needsConfirmation(
  services: Deps<'store'>,
  settings: RuntimeConfig,
  report: GatewayReport,
): Promise<boolean> {
  return (
    mustConfirmNotifications(settings) ||
    (await contradictsSignedTwin(services, report)) ||
    (await openAmountOf(services, report)) !== undefined
  );
}

/**
 * The bounds of the open-amount link `report` is a purchase on, if it is one. Such a purchase's
 * amount is the payer's choice, so it is taken only from the gateway's status answer, never from
 * the notification alone, and only within the bounds.
 */
async function openAmountOf(services: Deps<'store'>, report: GatewayReport): Promise<OpenAmount | undefined> {
  const link = await purchasedLink(services.store, report.order_id);
  return link === undefined ? undefined : linkOpenAmount(link);
}

/**
 * The signature covers only `order_id + status_code + gross_amount`, and a refund carries the same
 * "200" as a settlement: a captured notification with its `transaction_status` (or `fraud_status`)
 * edited still verifies. When confirmation is off (simulator mode only), a report whose signed
 * triple was already seen with another status is therefore never applied on its own word: it goes
 * through the status API like every notification does with confirmation on.
 */
async function contradictsSignedTwin(services: Deps<'store'>, report: GatewayReport): Promise<boolean> {
  const earlier = await services.store.notifications.listForOrder(report.order_id, 200);
  return earlier.some((n) => {
    if (n.statusCode !== report.status_code) return false;
    const twin = storedReport(n.payload);
    if (!twin || twin.gross_amount !== report.gross_amount) return false;
    return (
      (twin.transaction_status ?? '') !== (report.transaction_status ?? '') ||
      (twin.fraud_status ?? '') !== (report.fraud_status ?? '')
    );
  });
}

/**
 * How long a webhook waits for the gateway's status API before answering: the notification is
 * then kept as `unverified` (200) and the sweeper confirms it later, so a slow status API never
 * makes the gateway's own notification time out.
 */
export const CONFIRM_TIMEOUT_MS = 2_000;

/**
 * The status API's verdict on a notification. `settled`: asking again will not change it (the
 * gateway does not know the order, or answers about another one).
 */
export type Confirmation =
  | { truth: TrustedReport; read?: CurrentRead; reason?: undefined }
  | { truth?: undefined; reason: string; settled: boolean };

/**
 * The transaction stored under a report's order id, read without a lock after the gateway
 * answered (absent: none is stored): PostgreSQL's unlocked ingest starts from it (ingest.ts).
 */
export interface CurrentRead {
  gatewayOrderId: string;
  current?: VersionedTransaction;
}

const UNKNOWN_TO_GATEWAY = 'the gateway does not know the order';

/**
 * Asks the status API about the notification's SIGNED order id — never its unsigned transaction id —
 * and binds the answer to it (same order, same amount: trust.ts).
 */
export async function confirm(services: Deps<'gateway' | 'store'>, report: GatewayReport): Promise<Confirmation> {
  let st: GatewayAnswer | undefined;
  try {
    st = await services.gateway.status(report.order_id, { timeoutMs: CONFIRM_TIMEOUT_MS });
  } catch (err) {
    if (err instanceof GatewayError) return { reason: `status check failed (${err.kind})`, settled: false };
    throw err;
  }
  if (!st) return { reason: UNKNOWN_TO_GATEWAY, settled: true };
  const { link, read } = await linkAndCurrent(services, report.order_id);
  const bound = confirmNotification(st, report, link === undefined ? undefined : linkOpenAmount(link));
  return bound.ok ? { truth: bound.report, ...(read ? { read } : {}) } : { reason: bound.reason, settled: true };
}

/**
 * The link `gatewayOrderId` could be a purchase on (its amount bounds the answer), and on
 * PostgreSQL the transaction under `gatewayOrderId` itself in the same round trip: the unlocked
 * ingest reads it next, and one round trip is about 30–65 µs of the service's CPU plus a statement
 * of the server's. SQLite reads the link only (its ingest reads the row under the group commit's
 * lock, and a statement there costs no round trip).
 */
async function linkAndCurrent(
  services: Deps<'store'>,
  gatewayOrderId: string,
): Promise<{ link?: TransactionRecord; read?: CurrentRead }> {
  if (services.store.kind !== 'postgres') return { link: await purchasedLink(services.store, gatewayOrderId) };
  const bases = purchaseBases(gatewayOrderId);
  const found = await services.store.reports.findCurrentWith(gatewayOrderId, bases);
  const link = linkAmong(bases.map((b) => found.others.get(b)));
  return {
    ...(link ? { link } : {}),
    read: { gatewayOrderId, ...(found.current ? { current: found.current } : {}) },
  };
}
