/**
 * Examples for the rendered reference, attached to the schemas they illustrate: @fastify/swagger
 * shows a schema's one example as its media type's `example` (test/routes/openapi.test.ts checks
 * each against its schema).
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { ErpEvent } from '../../erp/events.js';

/** `schema` with `example`, as the reference shows it under a request body or an answer. */
export function withExample<T extends TSchema>(schema: T, example: Static<T>): T {
  return Type.With(schema, { examples: [example] }) as T;
}

/** An ERP event as delivered: shown under the `webhooks` of the document, the deliveries and the pull feed. */
export const ERP_EVENT_EXAMPLE: ErpEvent = {
  type: 'payment.status_changed',
  event_id: '550321d5-d1a2-495e-a8ab-716356a7def2',
  mercant_id: 'INV/2026/0042',
  order_id: 'INV/2026/0042:1',
  gateway_order_id: 'INV.2026.0042.1',
  status: 'partially_refunded',
  transaction_status: 'partial_refund',
  fraud_status: 'accept',
  payment_type: 'qris',
  gross_amount: 150000,
  refunded_amount: 50000,
  transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
  transaction_time: '2026-11-22T10:00:00+07:00',
  settlement_time: '2026-11-22T10:05:00+07:00',
  occurred_at: '2026-11-22T10:20:00+07:00',
  status_version: 2,
  expected_amount: 150000,
  amount_mismatch: false,
};
