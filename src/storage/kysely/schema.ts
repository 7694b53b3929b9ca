import type { Generated } from 'kysely';

/** Row types as stored. Times are ISO-8601 UTC strings (`2026-11-22T03:00:00.000Z`), sortable as text. */
export interface TransactionsTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  id: string;
  order_id: string;
  gateway_order_id: string;
  mercant_id: string;
  /** payment_link | snap | charge | external (first seen in a notification) */
  kind: string;
  /** N of `mercant_id:N` for ERP-shape links; 1 otherwise. */
  attempt: number;
  nominal: number;
  status: string;
  transaction_status: string | null;
  fraud_status: string | null;
  payment_type: string | null;
  gateway_transaction_id: string | null;
  payment_url: string | null;
  payment_link_id: string | null;
  snap_token: string | null;
  request_hash: string | null;
  request_json: string | null;
  gateway_json: string | null;
  expire_at: string | null;
  settlement_time: string | null;
  transaction_time: string | null;
  /** Incremented on every forwarded status change; carried in ERP events so the ERP can order them. */
  status_version: number;
  /** e.g. `unknown_status:foo` — a gateway status that was recorded but not mapped. */
  flags: string | null;
  last_event_at: string | null;
  created_at: string;
  updated_at: string;
  /** When the reconciler last asked the gateway about it (migration 004); oldest first next sweep. */
  checked_at: string | null;
  /** Cumulative rupiah refunded, as the gateway last reported it (migration 015_refunds). */
  refunded_amount: number;
  /** Whole rupiah the gateway reported as paid (its gross amount), once paid. */
  paid_amount: number | null;
  /** The amount before a customer-imposed fee or a promo, when the gateway reports one. */
  original_amount: number | null;
  /** The gateway's fee and what reaches the merchant, when a settlement report gives them. */
  fee_amount: number | null;
  net_amount: number | null;
  /** A link purchase's payment link `order_id` (migration 036); null for every other kind. */
  payment_link_order_id: string | null;
  /** The gateway API that created it, `legacy` or `snap_bi` (migration 039); `legacy` for every older row. */
  carrier: Generated<string>;
}

export interface NotificationsTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  id: Generated<number>;
  dedupe_key: string;
  gateway_order_id: string;
  transaction_ref: string | null;
  gateway_transaction_id: string | null;
  transaction_status: string | null;
  status_code: string | null;
  /** webhook | replay | status_check | reconcile */
  source: string;
  /** applied | duplicate | stale | unknown_status | unverified | ignored */
  result: string;
  payload: string;
  received_at: string;
  /** When the reconciler last re-asked the gateway about it (unverified ones only). */
  checked_at: string | null;
  /** Why it was not applied (unverified or ignored ones). */
  reason: string | null;
}

export interface OutboxEventsTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  seq: Generated<number>;
  /** Position in the pull feed (`GET /api/erp-events`), given in commit order once the event is visible. */
  feed_seq: number | null;
  event_id: string;
  event_type: string;
  /** Events with the same key are delivered strictly in seq order. */
  order_key: string;
  order_id: string | null;
  mercant_id: string | null;
  status_version: number | null;
  /** The exact JSON body delivered, identical on every retry. */
  payload: string;
  /** pending | delivered | failed | dead */
  state: string;
  attempts: number;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  /** Fencing token: bumped on every claim; a completion with an older token is rejected. */
  lease_token: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  delivered_at: string | null;
  /** Start of the current retry window (created, or a manual retry); dead after `erp.retry_for_hours` from it. Migration 003_outbox_retry_window. */
  retry_from: string | null;
  /** W3C `traceparent` of the work that wrote the event; its delivery attempts join that trace. Migration 030_trace_context. */
  trace_context: string | null;
  /** `erp` (an ERP event) or `alert` (an alert notification), migration 033_outbox_alert_lane; each has lanes of its own. */
  lane: Generated<string>;
}

/** An alert raised (migration 033_outbox_alert_lane); at most one open (`resolved_at` null) per account, alert and subject. */
export interface AlertsTable {
  id: Generated<number>;
  account: string;
  alert: string;
  subject: string;
  summary: string;
  /** JSON object. */
  details: string;
  started_at: string;
  resolved_at: string | null;
}

export interface DeliveryAttemptsTable {
  id: Generated<number>;
  event_seq: number;
  attempt_no: number;
  started_at: string;
  status_code: number | null;
  latency_ms: number | null;
  error: string | null;
  /** delivered | failed | dead | rejected_stale_lease */
  outcome: string;
  instance: string | null;
}

export interface IdempotencyTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  scope: string;
  idem_key: string;
  request_hash: string;
  /** in_flight | completed */
  state: string;
  response_status: number | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
  locked_until: string | null;
}

export interface RuntimeConfigTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  id: string;
  document: string;
  version: number;
  updated_at: string;
  updated_by: string | null;
}

/** Refund requests sent to the gateway (migration 015_refunds): the kept `refund_key` makes a retry safe. */
export interface RefundsTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  id: string;
  transaction_ref: string;
  /** Sent to the gateway; the same key again is answered with the first refund, never a second one. */
  refund_key: string;
  /** Requested rupiah; null = the rest (requests kept before migration 022; later ones state the amount). */
  amount: number | null;
  reason: string | null;
  /** requested (outcome unknown) | approved | refused | not_made (its outcome was unknown and the gateway holds no such refund) */
  state: string;
  /** While set and in the future, a request is calling the gateway with this refund (migration 022). */
  lease_until: string | null;
  /** The caller's Idempotency-Key (hashed with its API key): a retry of the same request is this refund again. */
  request_key: string | null;
  /** Who asked: `api` or `operator:<user>`. */
  actor: string;
  gateway_code: string | null;
  created_at: string;
  updated_at: string;
}

export interface Database {
  transactions: TransactionsTable;
  notifications: NotificationsTable;
  outbox_events: OutboxEventsTable;
  delivery_attempts: DeliveryAttemptsTable;
  outbox_lanes: OutboxLanesTable;
  idempotency_records: IdempotencyTable;
  runtime_config: RuntimeConfigTable;
  refunds: RefundsTable;
  auth_failures: AuthFailuresTable;
  operators: OperatorsTable;
  operator_sessions: OperatorSessionsTable;
  paylink_meta: MetaTable;
  feed_positions: FeedPositionsTable;
  reconciliation_imports: ReconciliationImportsTable;
  reconciliation_rows: ReconciliationRowsTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  alerts: AlertsTable;
}

/** One Midtrans merchant (migration 027); `default` is the one the environment configures. */
export interface AccountsTable {
  id: string;
  name: string;
  /** The MID (`G123456789`); notifications naming another are refused. */
  merchant_id: string | null;
  created_at: string;
  disabled_at: string | null;
}

/** An API key of an account, kept as the SHA-256 of the key (hex): the key itself is shown once. */
export interface ApiKeysTable {
  key_id: string;
  account: string;
  label: string | null;
  key_hash: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** Failed authentication attempts per scope (`operator`, `api_key`) and client address (migration 010_auth_failures). */
export interface AuthFailuresTable {
  scope: string;
  client: string;
  failures: number;
  window_start: string;
  locked_until: string | null;
}

/** Operators who sign in by name (migration 028_operators); `accounts` is a JSON array or null (all). */
export interface OperatorsTable {
  username: string;
  role: string;
  accounts: string | null;
  password_hash: string;
  disabled_at: string | null;
  created_at: string;
  last_sign_in_at: string | null;
}

/** Console sessions by the SHA-256 of the cookie's id (migration 028_operators). */
export interface OperatorSessionsTable {
  id_hash: string;
  username: string;
  created_at: string;
  last_seen_at: string;
  ended_at: string | null;
}

/** Facts about the database itself, made once with it. */
export interface MetaTable {
  key: string;
  value: string;
}

/**
 * The first undelivered event of each order that has one (migration 042), kept by triggers on
 * `outbox_events`: the only event of its order a claim may take.
 */
export interface OutboxLanesTable {
  account: string;
  lane: string;
  order_key: string;
  head_seq: number;
  /** The head's due time; null while it is dead (it holds its order until retried by hand). */
  due_at: string | null;
}

/** Marks of the pull feed that only grow (migration 025): `handed_out`, the highest position a pull handed out. */
export interface FeedPositionsTable {
  name: string;
  position: number;
}

/** One import of a gateway report (migration 024). */
export interface ReconciliationImportsTable {
  /** The account (one Midtrans merchant) the row belongs to (migration 027); `default` for every older row. */
  account: Generated<string>;
  id: string;
  file_sha256: string;
  /** running | done */
  state: string;
  rows: number;
  matched: number;
  missing_here: number;
  missing_at_gateway: number;
  amount_mismatch: number;
  status_mismatch: number;
  transaction_mismatch: Generated<number>;
  /** Rows of the report's refunds of type chargeback (migration 037). */
  chargeback: Generated<number>;
  /** `file` | `history_api` (migration 040). */
  source: Generated<string>;
  covers_from: string | null;
  covers_to: string | null;
  created_by: string;
  created_at: string;
  finished_at: string | null;
}

export interface ReconciliationRowsTable {
  id: Generated<number>;
  import_id: string;
  line: number | null;
  result: string;
  gateway_order_id: string;
  order_id: string | null;
  transaction_ref: string | null;
  report_status: string | null;
  report_amount: number | null;
  fee_amount: number | null;
  net_amount: number | null;
  paylink_status: string | null;
  paylink_amount: number | null;
  detail: string | null;
  /** A matched row's payment as it was when it matched: its amount and paid amount (migration 026). */
  matched_nominal: number | null;
  matched_paid_amount: number | null;
}
