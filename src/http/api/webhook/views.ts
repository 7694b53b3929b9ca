/** What the gateway and operators are answered about a notification. */
import { Type } from 'typebox';
import type { NotificationOutcome } from '../../../domain/reports/ingest.js';
import { PaymentStatusSchema, Str } from '../../schemas/common.js';

export const WebhookAnswerSchema = Type.Object({ status: Type.Literal('ok'), result: Str(32) });

export function webhookAnswer(outcome: NotificationOutcome) {
  return { status: 'ok' as const, result: outcome.result };
}

export const ReplayAnswerSchema = Type.Object({
  result: Str(32, 'applied, duplicate, stale, unknown_status or unverified'),
  confirmed: Type.Boolean({ description: 'the status was confirmed with the gateway status API' }),
  order_id: Type.Optional(Str(512)),
  status: Type.Optional(PaymentStatusSchema),
  event_id: Type.Optional(Str(64)),
  reason: Type.Optional(Str(200)),
});

export function replayAnswer(outcome: NotificationOutcome) {
  if ('transaction' in outcome) {
    return {
      result: outcome.result,
      confirmed: outcome.confirmed,
      order_id: outcome.transaction.orderId,
      status: outcome.status,
      event_id: outcome.eventId,
    };
  }
  return { result: outcome.result, confirmed: false, reason: outcome.reason };
}
