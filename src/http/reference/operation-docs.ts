/**
 * What the route schemas do not say by themselves, for the rendered reference: a description for
 * operations declared with a summary only, and request/answer examples. Applied to the generated
 * document (openapi.ts); a route's own description always wins.
 */
import { VERSION } from '../../platform/version.js';

const STATUS_VIEW = {
  order_id: 'INV/2026/0042:1',
  gateway_order_id: 'INV.2026.0042.1',
  mercant_id: 'INV/2026/0042',
  status: 'partially_refunded',
  transaction_status: 'partial_refund',
  fraud_status: 'accept',
  payment_type: 'qris',
  nominal: 150000,
  refunded_amount: 50000,
  transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
  expire_at: '2026-11-23T10:00:00+07:00',
  settlement_time: '2026-11-22T10:05:00+07:00',
  updated_at: '2026-11-22T10:20:00+07:00',
};

const LINK_VIEW = {
  order_id: 'INV/2026/0042:1',
  gateway_order_id: 'INV.2026.0042.1',
  mercant_id: 'INV/2026/0042',
  payment_url: 'https://app.midtrans.com/payment-links/pl-d8c4687194071ce6ba',
  status: 'pending',
  nominal: 150000,
  expire_at: '2026-11-23T10:00:00+07:00',
  created_at: '2026-11-22T10:00:00+07:00',
};

const LINK_DETAIL = { transaction_status: 'settlement', payment_type: 'qris', transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b', settlement_time: '2026-11-22T10:05:00+07:00', updated_at: '2026-11-22T10:05:00+07:00' };

export const ERP_EVENT_EXAMPLE = {
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

const RECONCILIATION_IMPORT = {
  id: '0b6f7c1e-5a52-4d0e-9c31-2f1e8a7d6b40',
  rows: 1250,
  matched: 1247,
  missing_here: 1,
  missing_at_gateway: 1,
  amount_mismatch: 1,
  status_mismatch: 0,
  transaction_mismatch: 0,
  covers_from: '2026-11-20',
  covers_to: '2026-11-22',
  file_sha256: '5f1d2c0a9b8e7f6a5d4c3b2a19080706f5e4d3c2b1a09f8e7d6c5b4a39281706',
  created_by: 'operator:ops',
  created_at: '2026-11-23T09:00:00+07:00',
  finished_at: '2026-11-23T09:00:03+07:00',
};

const DELIVERY = {
  id: '550321d5-d1a2-495e-a8ab-716356a7def2',
  event_id: '550321d5-d1a2-495e-a8ab-716356a7def2',
  type: 'payment.status_changed',
  status: 'failed',
  order_id: 'INV/2026/0042:1',
  mercant_id: 'INV/2026/0042',
  status_version: 2,
  attempts_count: 3,
  next_attempt_at: '2026-11-22T10:21:20+07:00',
  last_status_code: 503,
  last_error: 'HTTP 503',
  created_at: '2026-11-22T10:20:00+07:00',
  delivered_at: null,
  payload: ERP_EVENT_EXAMPLE,
  attempts: [{ attempt_no: 1, started_at: '2026-11-22T10:20:00+07:00', status_code: 503, latency_ms: 41, error: 'HTTP 503', outcome: 'failed', instance: 'paylink-1' }],
};

const CONFIG_DOCUMENT = {
  gateway: { mode: 'sandbox', server_key: '****8f2a', client_key: '****c91d', api_base_url: 'https://api.sandbox.midtrans.com', app_base_url: 'https://app.sandbox.midtrans.com', confirm_notifications: true },
  erp: { notify_url: 'https://erp.example.com/paylink/events', webhook_secret: '****Qx4=', timeout_ms: 10000, retry_for_hours: 72 },
  links: { default_expiry_minutes: 1440, enabled_payments: [] },
  reconcile: { interval_s: 60, pending_after_minutes: 30 },
  retention: { days: 30 },
  info: { version: VERSION, database: 'postgres', dev_endpoints: false, production: true, config_version: 4, updated_at: '2026-11-22T09:00:00+07:00', updated_by: 'operator' },
};

export interface OperationDoc {
  description?: string;
  request?: unknown;
  answer?: { status: string; example: unknown };
}

export const OPERATION_DOCS: Record<string, OperationDoc> = {
  'GET /api/reports/daily': {
    answer: { status: '200', example: { items: [{ date: '2026-11-20', payment_type: 'qris', paid_count: 2, paid_amount: 150000, refunded_amount: 20000, net_amount: 128950, fee_amount: 1050 }] } },
  },
  'GET /api/erp-events': {
    answer: { status: '200', example: { data: [{ cursor: 'YTUyMzQzMjJjZTllM2JiYjRjN2NkMzU4ODdkNzJiZDIuMTI.0xWfweuRGPK8YtYM6uJYZc', event: ERP_EVENT_EXAMPLE }], next_cursor: 'YTUyMzQzMjJjZTllM2JiYjRjN2NkMzU4ODdkNzJiZDIuMTI.0xWfweuRGPK8YtYM6uJYZc' } },
  },
  'POST /api/erp-events/ack': {
    answer: { status: '200', example: { acked: 12 } },
  },
  'POST /api/reconciliation/imports': {
    answer: { status: '201', example: RECONCILIATION_IMPORT },
  },
  'GET /api/reconciliation/imports': {
    description: 'The finished imports of gateway reports, newest first, each with its summary; page with `cursor`. A file imported twice appears once.',
    answer: { status: '200', example: { items: [RECONCILIATION_IMPORT] } },
  },
  'GET /api/reconciliation/imports/{id}': {
    description:
      'The import with its rows in the order of the report (`missing_at_gateway` rows last), each with its `result` and, where the report and paylink differ, a `detail` in words. Filter by `result`; page with `after` (the last row id).',
    answer: {
      status: '200',
      example: {
        ...RECONCILIATION_IMPORT,
        items: [{ id: 7, line: 8, result: 'amount_mismatch', gateway_order_id: 'INV.2026.0042.1', order_id: 'INV/2026/0042:1', report_status: 'settlement', report_amount: 150500, fee_amount: 1050, net_amount: 149450, paylink_status: 'paid', paylink_amount: 150000, detail: 'amount: the report says 150500, paylink 150000' }],
      },
    },
  },
  'GET /api/config': { answer: { status: '200', example: CONFIG_DOCUMENT } },
  'POST /api/config': { request: { erp: { notify_url: 'https://erp.example.com/paylink/events', timeout_ms: 10000 }, links: { default_expiry_minutes: 1440 } }, answer: { status: '200', example: CONFIG_DOCUMENT } },
  'POST /webhook/midtrans/replay': {
    description: 'For operators: runs a captured notification body (from the log or the gateway dashboard) through exactly the same pipeline as the webhook. Duplicates are recognised, so replaying is always safe.',
    request: { transaction_status: 'settlement', transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b', status_code: '200', signature_key: '…as received…', order_id: 'INV.2026.0042.1-1795460839321', gross_amount: '150000.00', payment_type: 'qris' },
    answer: { status: '200', example: { result: 'duplicate', confirmed: false, order_id: 'INV/2026/0042:1', status: 'paid' } },
  },
  'GET /api/deliveries': {
    description: 'The ERP outbox: every event with its state (`pending`, `delivered`, `failed`, `dead`), the exact body delivered and each attempt with its status code and latency. Filter by `status`; page with `cursor`.',
    answer: { status: '200', example: { items: [DELIVERY], next_cursor: 'eyJzIjoxMjN9' } },
  },
  'POST /api/deliveries/{id}/retry': {
    description: "Makes one event due now with the same event id and body (the ERP deduplicates on `webhook-id`). A dead event gets a new retry window. Written to the audit log with the operator's name.",
    answer: { status: '200', example: { ...DELIVERY, status: 'pending', next_attempt_at: '2026-11-22T11:00:00+07:00' } },
  },
  'GET /api/logs': {
    description: "Searches the JSON log files newest first: `q` (text), `level` (minimum), `order_id`, `request_id`, `since`/`until`. Every request's lines carry its `request_id` (also in the `X-Request-Id` answer header), and lines about an order its `order_id`. Page with `cursor`.",
    answer: { status: '200', example: { entries: [{ level: 30, time: '2026-11-22T10:20:00+07:00', request_id: '123d61e7-6c1e-4f6a-9a53-5f3b1f6b0a11', order_id: 'INV/2026/0042:1', gateway: { op: 'core.refund', method: 'POST', path: '/v2/INV.2026.0042.1-1795460839321/refund', status: 200, duration_ms: 84 }, msg: 'gateway call' }], next_cursor: 'eyJmIjoicGF5bGluay4yMDI2LTExLTIyLjEubG9nIn0' } },
  },
  'GET /api/transactions': {
    description:
      "Stored payments newest first, filtered by `status`, `mercant_id` and `since`, paged with `cursor`, with the money the gateway reported beside the order's amount (paid, original before a fee, refunded, and fee and net once a settlement report was imported). Reads only this service's records; it does not ask the gateway.",
    answer: {
      status: '200',
      example: {
        items: [
          {
            order_id: 'INV/2026/0042:1',
            gateway_order_id: 'INV.2026.0042.1',
            mercant_id: 'INV/2026/0042',
            kind: 'payment_link',
            attempt: 1,
            nominal: 150000,
            paid_amount: 150000,
            original_amount: null,
            refunded_amount: 0,
            fee_amount: 1050,
            net_amount: 148950,
            amount_mismatch: false,
            status: 'paid',
            transaction_status: 'settlement',
            fraud_status: 'accept',
            payment_type: 'qris',
            transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b',
            payment_url: 'https://app.midtrans.com/payment-links/pl-d8c4687194071ce6ba',
            expire_at: '2026-11-23T10:00:00+07:00',
            transaction_time: '2026-11-22T10:00:00+07:00',
            settlement_time: '2026-11-22T10:05:00+07:00',
            status_version: 1,
            created_at: '2026-11-22T10:00:00+07:00',
            updated_at: '2026-11-22T10:05:00+07:00',
          },
        ],
        next_cursor: 'eyJjIjoiMjAyNi0xMS0yMlQwMzowMDowMC4wMDBaIn0',
      },
    },
  },
  'GET /health': { description: 'Public. 200 while the database answers (with its latency) and the configured gateway; 503 when the database is unreachable, so a load balancer takes the instance out.', answer: { status: '200', example: { status: 'ok', checks: { database: { status: 'ok', kind: 'postgres', latency_ms: 2 }, gateway: { status: 'configured', mode: 'sandbox', base_url: 'https://api.sandbox.midtrans.com' } }, version: VERSION, uptime_s: 3600 } } },
  'GET /': { answer: { status: '200', example: { service: 'paylink', links: { console: '/console', docs: '/docs', openapi: '/openapi.json', health: '/health' } } } },
  'GET /health/live': { answer: { status: '200', example: { status: 'live' } } },
  'GET /health/ready': { answer: { status: '200', example: { status: 'ready', checks: { database: { status: 'ok' }, migrations: { status: 'ok' }, shutting_down: { status: 'ok' } }, failing: [] } } },
  'POST /api/payment-links': { request: { order_id: 'SO-77:3', nominal: 150000, customer: { first_name: 'Rina', last_name: 'Wijaya', email: 'rina@example.com', phone: '+628123456789' }, expire_at: '2026-12-01T10:00:00+07:00' }, answer: { status: '201', example: { ...LINK_VIEW, order_id: 'SO-77:3', gateway_order_id: 'SO-77.3', mercant_id: 'SO-77' } } },
  'POST /createtransaksi': { request: { mercant_id: 'INV/2026/0042', item: [{ id: 'SKU-1', name: 'Kopi Gayo 250 g', price: 75000, quantity: 2 }], customer: { first_name: 'Rina', email: 'rina@example.com' } }, answer: { status: '201', example: LINK_VIEW } },
  'GET /api/payment-links/{order_id}': { description: 'By the original order_id (URL-encoded, e.g. `INV%2F2026%2F0042%3A1`), the gateway_order_id or the gateway transaction_id. Answers the link as stored, with its current status; 404 when unknown.', answer: { status: '200', example: { ...LINK_VIEW, status: 'paid', ...LINK_DETAIL } } },
  'DELETE /api/payment-links/{order_id}': { answer: { status: '200', example: { ...LINK_VIEW, status: 'cancelled', ...LINK_DETAIL, transaction_status: null, payment_type: null, transaction_id: null, settlement_time: null } } },
  'POST /api/charge': { request: { order_id: 'PO/5:1', nominal: 125000, payment_type: 'bank_transfer', bank_transfer: { bank: 'bca' }, customer: { first_name: 'Rina', email: 'rina@example.com' } }, answer: { status: '201', example: { order_id: 'PO/5:1', gateway_order_id: 'PO.5.1', transaction_id: 'be4f3e44-d6ee-4355-8c64-c1d1dc7f4590', status: 'pending', transaction_status: 'pending', payment_type: 'bank_transfer', va_numbers: [{ bank: 'bca', va_number: '12345678901' }], expiry_time: '2026-11-23 10:00:00' } } },
  'POST /api/snap/token': { description: 'A token for the gateway\'s payment page (Snap), where the customer picks a method. Same order_id and body again → 200 with the same token; a different body → 409. Input errors are 400 before the gateway is asked.', request: { order_id: 'SNAP-1', nominal: 99000, enabled_payments: ['other_qris', 'bca_va'] }, answer: { status: '201', example: { order_id: 'SNAP-1', gateway_order_id: 'SNAP-1', token: '66e4fa55-fdac-4ef9-91b5-733b97d1b862', redirect_url: 'https://app.midtrans.com/snap/v4/redirection/66e4fa55-fdac-4ef9-91b5-733b97d1b862' } } },
  'GET /api/payments/{order_id}/status': { description: 'Asks the gateway now (a payment link through its newest purchase), feeds the answer through the same status machine as notifications — so a change found this way reaches the ERP too, once — and answers the stored payment.', answer: { status: '200', example: { ...STATUS_VIEW, status: 'paid', transaction_status: 'settlement', refunded_amount: 0 } } },
  'POST /api/payments/{order_id}/refund': { request: { amount: 50000, reason: 'One item returned' }, answer: { status: '200', example: STATUS_VIEW } },
  'POST /api/payments/{order_id}/cancel': { answer: { status: '200', example: { ...STATUS_VIEW, status: 'cancelled', transaction_status: 'cancel', refunded_amount: 0, settlement_time: null } } },
  'POST /api/payments/{order_id}/expire': { answer: { status: '200', example: { ...STATUS_VIEW, status: 'expired', transaction_status: 'expire', refunded_amount: 0, settlement_time: null } } },
  'POST /webhook/midtrans': { description: 'Where the gateway sends its HTTP notifications (configure `PUBLIC_BASE_URL/webhook/midtrans` in the gateway dashboard). The SHA-512 `signature_key` is verified, the status is confirmed with the gateway\'s status API, and the report is recorded, applied and turned into an ERP event in one database transaction before the 200. A bad signature is 401; a database outage 503 (the gateway retries).', request: { transaction_time: '2026-11-22 10:00:00', transaction_status: 'settlement', transaction_id: '4da06f05-2348-40c5-8ca4-51343995284b', status_code: '200', signature_key: '…sha512(order_id + status_code + gross_amount + server_key)…', payment_type: 'qris', order_id: 'INV.2026.0042.1-1795460839321', gross_amount: '150000.00', fraud_status: 'accept', currency: 'IDR' }, answer: { status: '200', example: { status: 'ok', result: 'applied' } } },
  'GET /api/logs/files': { description: 'The log files in LOG_DIR (rotated daily and at 20 MB), newest first, with size and modification time.', answer: { status: '200', example: { files: [{ name: 'paylink.2026-11-22.1.log', size_bytes: 482113, modified_at: '2026-11-22T17:20:00+07:00' }] } } },
  'GET /api/logs/view': { description: 'One file listed by /api/logs/files, as text: the last 1 MiB, or its last `tail` lines. Only plain files directly in LOG_DIR are served.' },
  'GET /openapi.json': {
    description: 'This document (OpenAPI 3.1), which /docs renders. The ERP event is described under `webhooks`; the error catalogue under `x-error-catalogue` (also a section of /docs, anchors `#error-CODE`).',
    answer: {
      status: '200',
      example: {
        openapi: '3.1.0',
        info: { title: 'paylink', version: VERSION },
        paths: { '/api/payment-links': { post: { summary: 'Create a payment link (direct shape)' } } },
        webhooks: { 'payment.status_changed': { post: { summary: 'Payment event delivered to ERP_NOTIFY_URL' } } },
        'x-error-catalogue': { VALIDATION_FAILED: { status: 400, title: 'Validation failed', doc: 'The request does not match the schema; see errors[].' } },
      },
    },
  },
  'GET /metrics': { description: 'Prometheus text format: HTTP requests and latency per route, gateway calls per operation and outcome, notifications per source and result, outbox states and delivery latency.' },
};

/** Plain descriptions for answers declared without one. */
export const ANSWER_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '204': 'No content',
};
