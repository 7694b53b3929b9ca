/**
 * A BI-SNAP notification: its RSA signature verified with the gateway's
 * public key over the exact bytes received (a body re-serialised or changed by one byte on the way
 * is refused, writing nothing), then the payment it names refreshed through the status API — the
 * same confirmation, status machine and ERP event as a legacy notification. Its fields themselves
 * are never applied: only what the status API answers about the order. A verified notification is
 * kept as a notification row (source `webhook`) with what became of it, as a legacy one is; a
 * refused one leaves none.
 */
import { createHash } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { NotificationResult } from '../../model/notification.js';
import { legacyStatus } from '../../gateway/snap-bi/gateway.js';
import { AppError } from '../../platform/errors.js';
import { verifyNotificationSignature } from '../../gateway/snap-bi/signature.js';
import { refreshFromGateway, type RefreshDeps } from './refresh.js';

/** The relative paths the gateway appends to the registered base URL, with the service code of its success reply. */
export const SNAP_BI_NOTIFY_PATHS = {
  '/v1.0/debit/notify': '56',
  '/v1.0/qr/qr-mpm-notify': '52',
  '/v1.0/transfer-va/payment': '25',
} as const;
export type SnapBiNotifyPath = keyof typeof SNAP_BI_NOTIFY_PATHS;

export interface SnapBiNotification {
  path: SnapBiNotifyPath;
  rawBody: Buffer;
  timestamp: string | undefined;
  signature: string | undefined;
}

/** What the gateway expects back (HTTP 200): its success code, and for a VA the account it paid. */
export interface SnapBiNotifyAnswer {
  responseCode: string;
  responseMessage: string;
  virtualAccountData?: Record<string, unknown>;
}

const str = (o: Record<string, unknown>, k: string): string | undefined =>
  typeof o[k] === 'string' ? (o[k] as string) : undefined;

export async function ingestSnapBiNotification(
  services: RefreshDeps & Deps<'runtimeConfig'>,
  n: SnapBiNotification,
): Promise<SnapBiNotifyAnswer> {
  const publicKey = (await services.runtimeConfig.current()).gateway.snap_bi.public_key;
  const signed =
    publicKey !== undefined &&
    n.timestamp !== undefined &&
    n.signature !== undefined &&
    verifyNotificationSignature(
      { path: n.path, rawBody: n.rawBody, timestamp: n.timestamp, signature: n.signature },
      publicKey,
    );
  if (!signed) throw new AppError('SIGNATURE_INVALID', 'The BI-SNAP notification signature does not verify.');
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(n.rawBody.toString('utf8'));
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    throw new AppError('VALIDATION_FAILED', 'The notification body is not JSON.');
  }
  const va = n.path === '/v1.0/transfer-va/payment';
  const orderId = va ? str(body, 'trxId') : str(body, 'originalPartnerReferenceNo');
  const answer: SnapBiNotifyAnswer = {
    responseCode: `200${SNAP_BI_NOTIFY_PATHS[n.path]}00`,
    responseMessage: 'Successful',
    ...(va
      ? {
          virtualAccountData: Object.fromEntries(
            ['partnerServiceId', 'customerNo', 'virtualAccountNo', 'trxId'].map((k) => [k, str(body, k) ?? '']),
          ),
        }
      : {}),
  };
  const tx = orderId === undefined ? undefined : await services.store.transactions.findByGatewayOrderId(orderId);
  if (!tx) {
    services.logger.warn(
      { gateway_order_id: orderId?.slice(0, 100), path: n.path },
      'BI-SNAP notification for an unknown order: acknowledged, nothing applied',
    );
    await keep(services, n, body, orderId, undefined, null, { result: 'ignored', reason: 'unknown order' });
    return answer;
  }
  const r = await refreshFromGateway(services, tx);
  services.logger.info(
    { order_id: tx.orderId, path: n.path, outcome: r.outcome },
    'BI-SNAP notification confirmed by the status API',
  );
  const o = outcomeOf(r.outcome);
  // The gateway transaction id the status check confirmed, never the notification's own (unverified) one.
  await keep(services, n, body, orderId, tx.id, o.result === 'ignored' ? null : r.transaction.gatewayTransactionId, o);
  return answer;
}

const INGEST_RESULTS: readonly string[] = ['applied', 'duplicate', 'stale', 'unknown_status'];

/** The row's result: the status API's answer as ingested, else why nothing was applied. */
function outcomeOf(outcome: string): { result: NotificationResult; reason?: string } {
  if (INGEST_RESULTS.includes(outcome)) return { result: outcome as NotificationResult };
  return { result: 'ignored', reason: `status check: ${outcome}` };
}

/**
 * The notification's row, written once its effect is known (the money was moved, or not, by the
 * status check alone). The same notification sent again keeps its first row.
 */
async function keep(
  services: Deps<'store'>,
  n: SnapBiNotification,
  body: Record<string, unknown>,
  orderId: string | undefined,
  transactionRef: string | undefined,
  gatewayTransactionId: string | null,
  o: { result: NotificationResult; reason?: string },
): Promise<void> {
  const info = body.additionalInfo;
  const code =
    str(body, 'latestTransactionStatus') ??
    (info !== null && typeof info === 'object' ? str(info as Record<string, unknown>, 'paymentFlagStatus') : undefined);
  await services.store.notifications.record({
    dedupeKey: `snap-bi:${createHash('sha256').update(n.path).update('\n').update(n.rawBody).digest('hex')}`,
    gatewayOrderId: (orderId ?? '').slice(0, 100),
    transactionRef: transactionRef ?? null,
    gatewayTransactionId,
    transactionStatus: code === undefined ? null : (legacyStatus(code)?.transaction_status ?? null),
    statusCode: code ?? null,
    source: 'webhook',
    result: o.result,
    payload: n.rawBody.toString('utf8'),
    reason: o.reason ?? null,
  });
}
