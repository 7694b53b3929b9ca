/**
 * The one storage interface, in domain terms. Implemented once with Kysely for SQLite and
 * PostgreSQL (`kysely-store.ts`); domain code depends on this file only.
 */
import type { NewNotification, NotificationsRepo } from './repos/notifications.js';
import type { NewOutboxEvent, OutboxRepo } from './repos/outbox.js';
import type { Page } from './repos/cursor.js';
import type { RefundsRepo } from './repos/refunds.js';
import type { ConsoleQueries } from './repos/console-queries.js';
import type { RetentionRepo } from './repos/retention.js';
import type { AuthFailuresRepo } from './repos/auth-failures.js';

export type { NotificationsRepo, NotificationRecord, NewNotification, NotificationSource, NotificationResult } from './repos/notifications.js';
export { decodeCursor, type Page } from './repos/cursor.js';
export type { RefundsRepo, RefundRecord, RefundState, NewRefund } from './repos/refunds.js';
export type { ConsoleQueries, ConsoleSearch, EventRow, NotificationRow, TransactionRow } from './repos/console-queries.js';
export type { AuthFailuresRepo, AuthFailurePolicy, AuthFailureState } from './repos/auth-failures.js';
export type { OutboxRepo, OutboxEvent, NewOutboxEvent, OutboxState, DeliveryAttempt, AttemptResult, AttemptOutcome } from './repos/outbox.js';

export const PAYMENT_STATUSES = ['pending', 'paid', 'challenge', 'failed', 'cancelled', 'expired', 'refunded', 'partially_refunded', 'chargeback'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const TRANSACTION_KINDS = ['payment_link', 'snap', 'charge', 'external'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

export interface TransactionRecord {
  id: string;
  orderId: string;
  gatewayOrderId: string;
  mercantId: string;
  kind: TransactionKind;
  attempt: number;
  /** Whole rupiah. */
  nominal: number;
  status: PaymentStatus;
  transactionStatus: string | null;
  fraudStatus: string | null;
  paymentType: string | null;
  gatewayTransactionId: string | null;
  paymentUrl: string | null;
  paymentLinkId: string | null;
  snapToken: string | null;
  requestHash: string | null;
  /** Normalized creating request (items, customer, …) as JSON text. */
  requestJson: string | null;
  /** Last gateway answer (create or status) as JSON text, secrets never included. */
  gatewayJson: string | null;
  expireAt: string | null;
  settlementTime: string | null;
  transactionTime: string | null;
  statusVersion: number;
  /** Cumulative rupiah refunded, as the gateway reported it. */
  refundedAmount: number;
  flags: string | null;
  lastEventAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewTransaction = Omit<TransactionRecord, 'createdAt' | 'updatedAt' | 'statusVersion' | 'refundedAmount' | 'lastEventAt' | 'flags' | 'settlementTime' | 'transactionTime' | 'transactionStatus' | 'fraudStatus' | 'paymentType' | 'gatewayTransactionId'> &
  Partial<Pick<TransactionRecord, 'statusVersion' | 'flags' | 'settlementTime' | 'transactionTime' | 'transactionStatus' | 'fraudStatus' | 'paymentType' | 'gatewayTransactionId'>>;

export type TransactionPatch = Partial<Omit<TransactionRecord, 'id' | 'orderId' | 'gatewayOrderId' | 'createdAt' | 'updatedAt'>>;

export interface TransactionFilter {
  status?: PaymentStatus;
  mercantId?: string;
  /** ISO time; only transactions created at or after it. */
  since?: string;
  /** 1..1000, default 100. */
  limit?: number;
  cursor?: string;
}

export interface TransactionsRepo {
  /** Throws `UniqueViolationError` when order_id or gateway_order_id exists. */
  insert(t: NewTransaction): Promise<TransactionRecord>;
  findById(id: string): Promise<TransactionRecord | undefined>;
  /**
   * Inside a transaction: the record, locked until the transaction ends (PostgreSQL row lock; one
   * round trip for what `notifications.lockTransaction` and `findById` do in two).
   */
  findForUpdate(id: string): Promise<TransactionRecord | undefined>;
  /**
   * `t`, read earlier in the same database transaction, as it stands under that transaction's lock:
   * PostgreSQL re-reads it `FOR UPDATE`; SQLite returns it as is (the transaction has held the one
   * write lock since it began, so nothing changed it since).
   */
  lockForUpdate(t: TransactionRecord): Promise<TransactionRecord>;
  findByOrderId(orderId: string): Promise<TransactionRecord | undefined>;
  /** `forUpdate`: inside a transaction, also lock it until the transaction ends (PostgreSQL; SQLite has one writer). */
  findByGatewayOrderId(gatewayOrderId: string, o?: { forUpdate?: boolean }): Promise<TransactionRecord | undefined>;
  findByGatewayTransactionId(transactionId: string): Promise<TransactionRecord | undefined>;
  /** The highest attempt for an ERP mercant_id, if any. */
  latestForMercant(mercantId: string): Promise<TransactionRecord | undefined>;
  /**
   * Applies `patch` and returns the record as it is afterwards. With `ifStatusIn`, the patch is
   * applied only while the stored status is one of those (checked in the same statement), so a
   * write based on an older read never undoes a status a notification applied meanwhile.
   */
  update(
    id: string,
    patch: TransactionPatch,
    o?: {
      ifStatusIn?: readonly PaymentStatus[];
      /** Also applied, in the same statement, only while the stored status is one of `statuses`. */
      whileStatusIn?: { statuses: readonly PaymentStatus[]; patch: TransactionPatch };
    },
  ): Promise<TransactionRecord>;
  /** Newest first. */
  list(filter: TransactionFilter): Promise<Page<TransactionRecord>>;
  /** Pending transactions whose expiry passed before `expiredBefore`, or created before `createdBefore` with no event since. Never-checked first, then the least recently checked. */
  listOverduePending(expiredBefore: string, createdBefore: string, limit: number): Promise<TransactionRecord[]>;
  /** Notes that the reconciler asked about it: `listOverduePending` returns the least recently checked first. */
  markChecked(id: string, at: string): Promise<void>;
}

export interface RuntimeConfigRow {
  /** The stored overrides (a partial runtime config document). */
  document: Record<string, unknown>;
  version: number;
  updatedAt: string;
  updatedBy: string | null;
}

export interface ConfigRepo {
  get(): Promise<RuntimeConfigRow | undefined>;
  /** Optimistic: succeeds only when the stored version still equals `expectedVersion` (0 = none stored). */
  put(document: Record<string, unknown>, expectedVersion: number, updatedBy: string | null): Promise<RuntimeConfigRow | undefined>;
}

export interface IdempotencyRecord {
  scope: string;
  key: string;
  /** Fingerprint of the first request (method, path, body). */
  requestHash: string;
  state: 'in_flight' | 'completed';
  responseStatus: number | null;
  /** The exact response bytes sent the first time (UTF-8 text). */
  responseBody: string | null;
  createdAt: string;
  /** After this the record may be pruned and the key is free again. */
  expiresAt: string;
  /** While in flight: the claim's lock expiry, which also serves as its fencing token. */
  lockedUntil: string | null;
}

export type IdempotencyClaim = { claimed: true; token: string } | { claimed: false; record: IdempotencyRecord };

export interface IdempotencyRepo {
  /**
   * Atomically claims (scope, key) for a request with this fingerprint, across connections and
   * instances. Won when the key is new, expired, or held by a crashed request with the same
   * fingerprint whose lock (`lockMs`) ran out; otherwise the existing record is returned.
   */
  claim(scope: string, key: string, requestHash: string, o: { now: Date; retentionMs: number; lockMs: number }): Promise<IdempotencyClaim>;
  /** Stores the response; false when the claim was lost (lock expired and taken over). */
  complete(scope: string, key: string, token: string, status: number, body: string): Promise<boolean>;
  /** Forgets an in-flight claim (the request must not be remembered, e.g. it failed validation). */
  release(scope: string, key: string, token: string): Promise<boolean>;
  get(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Deletes the records expired at `now` (callers run it now and then); returns how many. */
  pruneExpired(now: Date): Promise<number>;
}

export interface ReportWrite {
  /** Written with its final result. */
  notification: NewNotification;
  transactionId: string;
  patch: TransactionPatch;
  /** The ERP event of an applied change, its payload built from the transaction as `patch` leaves it. */
  event?: NewOutboxEvent;
  /** The domain clock's time: the event is due at once. */
  now: Date;
}

export type ReportWritten = { inserted: true; notificationId: number; transaction: TransactionRecord } | { inserted: false };

export interface ReportWritesRepo {
  /**
   * Inside a transaction that holds the transaction's lock: records a new notification, applies
   * `patch` and writes `event` — all of it, or, when the notification's dedupe key exists already,
   * nothing (`inserted: false`; the caller reads the earlier record).
   */
  recordNew(w: ReportWrite): Promise<ReportWritten>;
}

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  readonly transactions: TransactionsRepo;
  readonly config: ConfigRepo;
  readonly idempotency: IdempotencyRepo;
  /** Gateway notifications and status reports received (deduplicated). */
  readonly notifications: NotificationsRepo;
  /** ERP events to deliver, and their delivery attempts. */
  readonly outbox: OutboxRepo;
  /** A gateway report's notification, transaction change and ERP event, written as one step. */
  readonly reports: ReportWritesRepo;
  /** Refund requests kept with their gateway refund_key. */
  readonly refunds: RefundsRepo;
  /** Read-only searches and counts for the operator console. */
  readonly console: ConsoleQueries;
  /** Deleting what is older than the retention age, batch by batch. */
  readonly retention: RetentionRepo;
  /** Failed authentication attempts per client, shared by every instance. */
  readonly authFailures: AuthFailuresRepo;
  /** Runs `fn` in one database transaction; everything `fn` does through `tx` commits or rolls back together. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class UniqueViolationError extends Error {
  constructor(message = 'unique constraint violated') {
    super(message);
    this.name = 'UniqueViolationError';
  }
}

export function isUniqueViolation(err: unknown): boolean {
  if (err instanceof UniqueViolationError) return true;
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
