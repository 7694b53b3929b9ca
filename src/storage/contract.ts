/**
 * The storage contract, in domain terms: every repository interface, the Store that holds them,
 * and which methods write. Implemented once with Kysely for SQLite and PostgreSQL (`kysely/`); the
 * rest of the service depends on this file and on `model/` only, and this file imports nothing
 * else: a database's codes and its cursor format stay behind the Store's own methods.
 */
import type { PaymentStatus, NewTransaction, TransactionPatch, TransactionRecord } from '../model/payment.js';
import type {
  NewNotification,
  NotificationOutcomeUpdate,
  NotificationRecord,
  NotificationResult,
} from '../model/notification.js';
import type {
  AttemptResult,
  DeliveryAttempt,
  NewOutboxEvent,
  OutboxLane,
  OutboxEvent,
  OutboxState,
} from '../model/delivery.js';
import type { NewRefund, RefundRecord, RefundState } from '../model/refund.js';
import type { AuthFailurePolicy, AuthFailureState } from '../model/auth-failures.js';
import type { Page } from '../model/page.js';
import type { NewOperator, OperatorChange, OperatorRecord, OperatorSession } from '../model/operator.js';
import type { AccountRecord, ApiKeyMatch, ApiKeyRecord } from '../model/account.js';
import type { AlertKind, AlertRecord, NewAlert } from '../model/alert.js';
import type {
  NewReconciliationRow,
  ReconciliationCounts,
  ReconciliationImport,
  ReconciliationResult,
  ReconciliationRow,
  ReconciliationSource,
} from '../model/reconciliation.js';

export interface TransactionFilter {
  /** Only this account's; every account's when absent. */
  account?: string;
  /** Only these accounts' (none when empty), beside `account`; every account's when absent. */
  accounts?: readonly string[];
  status?: PaymentStatus;
  mercantId?: string;
  /** ISO time; only transactions created at or after it. */
  since?: string;
  /** 1..1000, default 100. */
  limit?: number;
  cursor?: string;
}

/**
 * A store is a view of one account (`Store.account`; `forAccount` gives another's): lookups by an
 * order id, a gateway order id or a gateway transaction id find only that account's payments, and
 * new rows are that account's. Lookups by our own ids (uuids) and the workers' lists span every
 * account; their records name the account.
 */
export interface TransactionsRepo {
  /** Throws `UniqueViolationError` when order_id or gateway_order_id exists in this account. */
  insert(t: NewTransaction): Promise<TransactionRecord>;
  findById(id: string): Promise<TransactionRecord | undefined>;
  /**
   * The one way to lock a payment: inside a database transaction, the record, locked until the
   * transaction ends (PostgreSQL: `FOR UPDATE`, in the same statement as the lookup; SQLite: the
   * transaction holds the one write lock from its start, so the read is the lock).
   */
  findForUpdate(key: { id: string } | { gatewayOrderId: string }): Promise<TransactionRecord | undefined>;
  findByOrderId(orderId: string): Promise<TransactionRecord | undefined>;
  findByGatewayOrderId(gatewayOrderId: string): Promise<TransactionRecord | undefined>;
  findByGatewayTransactionId(transactionId: string): Promise<TransactionRecord | undefined>;
  /**
   * Payments whose money moved (paid, refunded, charged back) with a payment time (settlement, else
   * transaction time; ISO `+07:00` as stored) between `from` and `to`, by id after `afterId`; of
   * `accounts` only when given (none when empty; every account's otherwise).
   */
  listMoneyMovedBetween(
    from: string,
    to: string,
    afterId: string,
    limit: number,
    accounts?: readonly string[],
  ): Promise<TransactionRecord[]>;
  /** Those of `gatewayOrderIds` that exist (at most 1,000 ids a call). */
  findManyByGatewayOrderIds(gatewayOrderIds: readonly string[]): Promise<TransactionRecord[]>;
  /** The highest attempt for an ERP mercant_id, if any. */
  latestForMercant(mercantId: string): Promise<TransactionRecord | undefined>;
  /** The purchases made on the payment link `linkOrderId` (used more than once), oldest first, at most `limit`. */
  listLinkPurchases(linkOrderId: string, limit: number): Promise<TransactionRecord[]>;
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
  /** How many pending (or challenged) transactions have an expiry before `expiredBefore`: a range of transactions_status_idx. */
  countPendingPastExpiry(expiredBefore: string): Promise<number>;
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

/** The account's runtime config overrides (one row per account). */
export interface ConfigRepo {
  get(): Promise<RuntimeConfigRow | undefined>;
  /** Optimistic: succeeds only when the stored version still equals `expectedVersion` (0 = none stored). */
  put(
    document: Record<string, unknown>,
    expectedVersion: number,
    updatedBy: string | null,
  ): Promise<RuntimeConfigRow | undefined>;
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

/** Idempotency records of this account: the same key in two accounts is two requests. */
export interface IdempotencyRepo {
  /**
   * Atomically claims (scope, key) for a request with this fingerprint, across connections and
   * instances. Won when the key is new, expired, or held by a crashed request with the same
   * fingerprint whose lock (`lockMs`) ran out; otherwise the existing record is returned.
   */
  claim(
    scope: string,
    key: string,
    requestHash: string,
    o: { now: Date; retentionMs: number; lockMs: number },
  ): Promise<IdempotencyClaim>;
  /** Stores the response; false when the claim was lost (lock expired and taken over). */
  complete(scope: string, key: string, token: string, status: number, body: string): Promise<boolean>;
  /** Forgets an in-flight claim (the request must not be remembered, e.g. it failed validation). */
  release(scope: string, key: string, token: string): Promise<boolean>;
  get(scope: string, key: string): Promise<IdempotencyRecord | undefined>;
  /** Deletes the records expired at `now` (callers run it now and then); returns how many. */
  pruneExpired(now: Date): Promise<number>;
}

/** A recorded notification's outcome, with the transaction it names (undefined when it names none, or none exists). */
export interface RecordedWithTransaction {
  notificationId: number;
  result: NotificationResult;
  transactionRef: string | null;
  transaction: TransactionRecord | undefined;
}

export interface NotificationsRepo {
  /**
   * Inserts unless the dedupe key exists. `inserted` false → `existing` is the earlier record
   * (a duplicate, or an `unverified` one the caller may process again).
   */
  record(
    n: NewNotification,
  ): Promise<{ inserted: true; id: number } | { inserted: false; existing: NotificationRecord }>;
  setResult(id: number, o: NotificationOutcomeUpdate): Promise<void>;
  findById(id: number): Promise<NotificationRecord | undefined>;
  findByDedupeKey(dedupeKey: string): Promise<NotificationRecord | undefined>;
  /** The record with this dedupe key and the transaction it names, in one lookup (every notification's duplicate check). */
  findWithTransaction(dedupeKey: string): Promise<RecordedWithTransaction | undefined>;
  /** Oldest first. */
  listByResult(result: NotificationResult, limit: number): Promise<NotificationRecord[]>;
  /**
   * Unverified notifications to re-ask the gateway about: never rechecked first (oldest first),
   * then the least recently rechecked, so ones whose check keeps failing go to the back.
   */
  listUnverifiedForRecheck(limit: number): Promise<NotificationRecord[]>;
  /** Notes a recheck (whatever its outcome): `listUnverifiedForRecheck` returns it after the others. */
  markChecked(id: number, at: string): Promise<void>;
  /** Oldest first. */
  listForOrder(gatewayOrderId: string, limit?: number): Promise<NotificationRecord[]>;
  /** True when a report of this gateway transaction was applied to the transaction before. */
  transactionSeen(transactionRef: string, gatewayTransactionId: string): Promise<boolean>;
}

/** One event's attempt for `OutboxRepo.completeMany`. */
export interface AttemptCompletionOf {
  seq: number;
  leaseToken: number;
  result: AttemptResult;
}

export interface OutboxRepo {
  /** `now`: the domain clock's time (due at once, retry window starts); default the store's clock. */
  enqueue(e: NewOutboxEvent, now?: Date): Promise<OutboxEvent>;
  /**
   * Leases up to `limit` due events to `owner` until `now + leaseMs`, bumping each one's fencing
   * token. Never an event while an earlier one of the same order key is pending, failed or dead.
   * PostgreSQL: `FOR UPDATE SKIP LOCKED`, so instances never claim the same row. `account`: only
   * that account's events (every account's when absent); `lane`: ERP events (default) or alerts.
   */
  claimDue(
    owner: string,
    now: Date,
    leaseMs: number,
    limit: number,
    account?: string,
    lane?: OutboxLane,
  ): Promise<OutboxEvent[]>;
  /**
   * Records an attempt and moves the event on, only if `leaseToken` is still the event's token.
   * False (and an attempt recorded as `rejected_stale_lease`) when the lease was lost meanwhile.
   */
  complete(seq: number, leaseToken: number, instance: string, r: AttemptResult): Promise<boolean>;
  /**
   * `complete` of several events (each `seq` once) in one go: one transaction on SQLite, one
   * statement on PostgreSQL. Each event is fenced and its attempt recorded exactly as by `complete`
   * alone; the answer is `complete`'s for each, in the order given. All or nothing: when it fails,
   * none is recorded.
   */
  completeMany(instance: string, items: readonly AttemptCompletionOf[]): Promise<boolean[]>;
  findByEventId(eventId: string): Promise<OutboxEvent | undefined>;
  /** Newest first. */
  /** Newest first; `account`: only that account's events (every account's when absent). */
  list(filter: {
    account?: string;
    /** Only these accounts' events (none when empty), beside `account`. */
    accounts?: readonly string[];
    state?: OutboxState;
    limit?: number;
    cursor?: string;
  }): Promise<Page<OutboxEvent>>;
  attemptsFor(seqs: number[]): Promise<DeliveryAttempt[]>;
  /**
   * Due now, same event id, a fresh retry window; in-flight attempts are fenced off. The order's
   * later events held behind it get a fresh window too: they waited, they did not fail.
   */
  retryNow(eventId: string, now: Date): Promise<OutboxEvent | undefined>;
  /** With `accounts`, of those accounts' events only. */
  countByState(accounts?: readonly string[]): Promise<Record<OutboxState, number>>;
  /**
   * `created_at` of the oldest event still to deliver (pending or failed; dead ones wait for a
   * person and are counted by `countByState`), undefined when none; with `account`, of that
   * account's events only. Two index seeks.
   */
  oldestUndeliveredAt(account?: string): Promise<string | undefined>;
  /**
   * Frees every lease (bumping the fencing tokens). Only for SQLite at start-up: one process owns
   * the file, so a lease still set was left by a previous run of this process that died.
   */
  releaseAllLeases(): Promise<number>;
  /** Earliest `next_attempt_at` among events still to deliver. */
  nextDueAt(): Promise<string | undefined>;
  /**
   * ERP events written in [`since`, `until`) (ISO instants), oldest first, at most `limit`; narrowed
   * to one order id, one delivery state and one account when given.
   */
  inWindow(filter: {
    since: string;
    until?: string;
    orderId?: string;
    state?: OutboxState;
    account?: string;
    /** Only these accounts' events (none when empty). */
    accounts?: readonly string[];
    limit: number;
  }): Promise<OutboxEvent[]>;
  /** Gives up a lease not used (the event was not attempted), if `leaseToken` is still current. */
  release(seq: number, leaseToken: number): Promise<boolean>;
  /**
   * Makes `account`'s waiting events due by `now` (their ERP answers again), to be claimed in the
   * order written: each failed event that is not leased is made due at the time it was written (at
   * `now` if that is later); the others are due since they were written. How many were moved.
   */
  dueNow(account: string, now: Date, lane?: OutboxLane): Promise<number>;
}

export interface RefundsRepo {
  insert(r: NewRefund): Promise<RefundRecord>;
  findById(id: string): Promise<RefundRecord | undefined>;
  /** The requests of this transaction whose outcome is unknown, oldest first. */
  listOpen(transactionRef: string): Promise<RefundRecord[]>;
  /** The refund a caller asked for with this request key, if any. */
  findByRequestKey(transactionRef: string, requestKey: string): Promise<RefundRecord | undefined>;
  /** Whole rupiah of this transaction's refunds the gateway approved. */
  getApprovedTotal(transactionRef: string): Promise<number>;
  /** Takes the lease of a request still `requested` that nobody holds at `now`; false when it is held or settled. */
  claimLease(id: string, now: Date, until: Date): Promise<boolean>;
  /** Gives up the lease: the outcome stays unknown, and the next request asks the gateway about it. */
  releaseLease(id: string): Promise<void>;
  /** Settles a request nobody holds at `now` (false when it is held again or already settled). */
  settleIdle(
    id: string,
    state: Exclude<RefundState, 'requested'>,
    gatewayCode: string | null,
    now: Date,
  ): Promise<boolean>;
  /** The outcome, and the lease given up. */
  settle(id: string, state: Exclude<RefundState, 'requested'>, gatewayCode: string | null): Promise<void>;
  /** Oldest first. */
  listFor(transactionRef: string): Promise<RefundRecord[]>;
}

/** The console's transaction search. */
export interface ConsoleSearch {
  /** Part of the order id, gateway order id or gateway transaction id. */
  q?: string;
  mercantId?: string;
  status?: string;
  paymentType?: string;
  from?: string;
  to?: string;
  /** Only these accounts' payments (none when empty); every account's when absent. */
  accounts?: readonly string[];
  page: number;
  pageSize: number;
}

/**
 * Searches and counts for the operator console that the other repositories do not need. Times are
 * ISO UTC text. The searches span every account unless told; what is looked up for one order is
 * of the store's account only (the same order id in two accounts is two payments).
 */
export interface ConsoleQueries {
  /** Newest first; `more` tells whether a next page exists. */
  searchTransactions(s: ConsoleSearch): Promise<{ items: TransactionRecord[]; more: boolean }>;
  /** With `accounts`, each of these counts only those accounts' rows (none for an empty list). */
  countsByStatus(since: string, accounts?: readonly string[]): Promise<Record<string, number>>;
  paymentTypes(): Promise<string[]>;
  oldestUndelivered(accounts?: readonly string[]): Promise<string | undefined>;
  lastNotification(accounts?: readonly string[]): Promise<NotificationRecord | undefined>;
  /**
   * Everything the gateway told us about one transaction, oldest first: what was matched to it, and
   * what could not be yet (an unverified notification has no transaction) under its gateway order
   * id or one of its link purchases (`<id>-<suffix>`).
   */
  notificationsFor(transactionRef: string, gatewayOrderId: string): Promise<NotificationRecord[]>;
  /**
   * The ERP events of one order of the store's account, by its outbox ordering key (the order id in
   * `default`; see `orderKeyOf`), in the order they are delivered.
   */
  eventsForOrder(orderKey: string): Promise<OutboxEvent[]>;
  /**
   * Failing or dead events across orders, oldest first (the ones that wait longest); of `accounts`
   * only when given (none when empty).
   */
  undeliverable(
    state: 'failed' | 'dead' | 'both',
    limit: number,
    offset: number,
    accounts?: readonly string[],
  ): Promise<OutboxEvent[]>;
}

/** Deleting what is old, a small batch per call, so that each call holds the database only briefly. Transactions are never deleted. */
export interface RetentionRepo {
  /** ERP events delivered before `before` (ISO), oldest first, with their delivery attempts; returns how many events. */
  pruneDelivered(before: string, limit: number): Promise<number>;
  /** Gateway notifications processed and received before `before` (ISO); unverified ones stay for the reconciler. */
  pruneNotifications(before: string, limit: number): Promise<number>;
  /** Idempotency records expired at `now` (ISO): their keys are free again. */
  pruneIdempotency(now: string, limit: number): Promise<number>;
}

/** Failed authentication attempts per client, shared by every instance. */
export interface AuthFailuresRepo {
  get(scope: string, client: string): Promise<AuthFailureState | undefined>;
  /**
   * Counts one failure, atomically across instances: a window older than `windowMs` starts again
   * at 1, a live lock is left alone; reaching `maxFailures` locks the client for `lockMs`.
   */
  fail(scope: string, client: string, now: Date, p: AuthFailurePolicy): Promise<AuthFailureState>;
  clear(scope: string, client: string): Promise<void>;
  /** The latest lock of `scope` still running at `now` (ISO), over every client; null when none. */
  lockedUntil(scope: string, now: Date): Promise<string | null>;
  /** Forgets every client's failures and lock in `scope`. */
  clearScope(scope: string): Promise<void>;
  prune(now: Date, p: AuthFailurePolicy): Promise<void>;
}

/** Operators who sign in by name, and their console sessions. */
export interface OperatorsRepo {
  /** False when the username is taken. */
  insert(op: NewOperator, now: Date): Promise<boolean>;
  get(username: string): Promise<OperatorRecord | undefined>;
  /** Every operator, by username. */
  list(): Promise<OperatorRecord[]>;
  /** The operator as changed, or undefined when there is none of that name. */
  update(username: string, change: OperatorChange): Promise<OperatorRecord | undefined>;
  recordSignIn(username: string, now: Date): Promise<void>;
  createSession(idHash: string, username: string, now: Date): Promise<void>;
  /** The session of that id hash, ended or not. */
  findSession(idHash: string): Promise<OperatorSession | undefined>;
  /** Marks the session seen at `now` (the idle expiry counts from it). */
  touchSession(idHash: string, now: Date): Promise<void>;
  endSession(idHash: string, now: Date): Promise<void>;
  /** Ends every open session of `username`; returns how many. */
  endSessionsOf(username: string, now: Date): Promise<number>;
  /** Deletes sessions ended or last seen before `before` (ISO); returns how many. */
  pruneSessions(before: string): Promise<number>;
}

/** One ERP event in the pull feed: its position and the exact body a push would carry. */
export interface FeedEntry {
  position: number;
  payload: string;
}

/**
 * The pull feed: every ERP event in one sequence that only grows. Positions are given in commit
 * order (an event becomes visible, then gets the next position), so a reader that has seen position
 * N never misses an event that shows up later with a lower one. They are never below a floor the
 * caller derives from the clock, so a restored copy of the database gives its new events positions
 * above those its original handed out after the backup.
 */
export interface FeedRepo {
  /** The database's own id and the key that signs its cursors, made once with the database. */
  identity(): Promise<{ databaseId: string; cursorKey: string }>;
  /** Gives the committed events that have none the next positions, in outbox order, none below `floor`; how many. */
  sequence(floor: number): Promise<number>;
  /** Up to `limit` events after `position`, in feed order. */
  after(position: number, limit: number): Promise<FeedEntry[]>;
  /** Raises the highest position handed out by a pull to `position`; never lowers it. */
  handedOut(position: number): Promise<void>;
  /**
   * Marks every event at or before `position` and at or before the highest position handed out that
   * is not delivered yet as delivered (acknowledged by a puller); how many.
   */
  acknowledge(position: number, now: Date, by: string): Promise<number>;
}

/** Imports of the gateway's reports, and every row's result. */
export interface ReconciliationRepo {
  /** An import under way (`running`): its rows are added batch by batch. */
  begin(i: { id: string; createdBy: string; now: Date; source?: ReconciliationSource }): Promise<void>;
  addRows(rows: NewReconciliationRow[]): Promise<void>;
  /**
   * Payments whose money moved (paid, refunded, charged back) with a payment time between `from`
   * and `to` (ISO, `+07:00`, as stored), that no row of this import matched; by id, after `afterId`.
   */
  missingAtGateway(
    importId: string,
    from: string,
    to: string,
    afterId: string,
    limit: number,
  ): Promise<TransactionRecord[]>;
  /** After a large import's rows are staged: the database's query planner learns of them, so the checks that follow use the right indexes. */
  learnRows(): Promise<void>;
  /**
   * Writes the fee and net of this import's matched rows onto their payments (the first such row of
   * each payment), each only while the payment still holds the status, amount and paid amount it was
   * matched with. `written` < `expected`: a payment changed since it was matched (the caller rolls
   * the transaction back).
   */
  keepMatchedFees(importId: string): Promise<{ expected: number; written: number }>;
  /** Done, with the file's hash (known once it was read) and its counts. False when an import of the same file finished first (the caller discards this one). */
  finish(
    id: string,
    fileSha256: string,
    counts: ReconciliationCounts,
    covers: { from: string | null; to: string | null },
    now: Date,
  ): Promise<boolean>;
  /** Removes an import and its rows (a failed one, or a repeat of a file already imported). */
  discard(id: string): Promise<void>;
  findDoneByFile(fileSha256: string): Promise<ReconciliationImport | undefined>;
  get(id: string): Promise<ReconciliationImport | undefined>;
  /** Newest first. */
  list(filter: { limit: number; cursor?: string }): Promise<Page<ReconciliationImport>>;
  /** In the report's order (missing_at_gateway rows last), after row `afterId`. */
  rows(
    importId: string,
    filter: { result?: ReconciliationResult; limit: number; afterId?: number },
  ): Promise<ReconciliationRow[]>;
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

export type ReportWritten =
  { inserted: true; notificationId: number; transaction: TransactionRecord } | { inserted: false };

/** A transaction read without a lock, with a token that changes whenever its row is written. */
export interface VersionedTransaction {
  transaction: TransactionRecord;
  /** Opaque: equal only while the row has not been written since it was read. */
  rowVersion: string;
}

/** `findCurrentWith`'s answer: the row under the id itself (absent: none), and those found under the others, by id. */
export interface CurrentWithOthers {
  current?: VersionedTransaction;
  others: Map<string, TransactionRecord>;
}

export type ReportWrittenIfUnchanged =
  | { outcome: 'written'; notificationId: number; transaction: TransactionRecord }
  /** The notification's dedupe key exists already: nothing written. */
  | { outcome: 'duplicate' }
  /** The row was written (or removed) since it was read: nothing written; read again and decide again. */
  | { outcome: 'moved' };

export interface ReportWritesRepo {
  /**
   * Inside a transaction that holds the transaction's lock: records a new notification, applies
   * `patch` and writes `event` — all of it, or, when the notification's dedupe key exists already,
   * nothing (`inserted: false`; the caller reads the earlier record).
   */
  recordNew(w: ReportWrite): Promise<ReportWritten>;
  /** The transaction stored under `gatewayOrderId` in this account, without a lock, with its row version. */
  findCurrent(gatewayOrderId: string): Promise<VersionedTransaction | undefined>;
  /**
   * `findCurrent(gatewayOrderId)` and, in the same read, the transactions stored under each of
   * `others` (gateway order ids too, e.g. the links it could be a purchase on): one round trip on
   * PostgreSQL instead of one per id.
   */
  findCurrentWith(gatewayOrderId: string, others: readonly string[]): Promise<CurrentWithOthers>;
  /**
   * Outside a transaction: `recordNew` as one step that takes the transaction's lock itself and
   * writes only while the row is still the version `rowVersion` names (read by `findCurrent`), so
   * a decision made over that read holds; otherwise nothing is written (`moved`).
   */
  recordNewIfUnchanged(w: ReportWrite & { rowVersion: string }): Promise<ReportWrittenIfUnchanged>;
}

export interface NewAccount {
  id: string;
  name: string;
  merchantId: string | null;
}

/** The accounts (not scoped by the store's account). */
export interface AccountsRepo {
  /** Throws `UniqueViolationError` when the id exists (disabled ones included). */
  insert(a: NewAccount, now: Date): Promise<AccountRecord>;
  get(id: string): Promise<AccountRecord | undefined>;
  /** Oldest first, disabled ones included. */
  list(): Promise<AccountRecord[]>;
  /** How many accounts exist, disabled ones included. */
  count(): Promise<number>;
  setMerchantId(id: string, merchantId: string | null): Promise<void>;
  /** False when there is no such account or it is disabled already. */
  disable(id: string, now: Date): Promise<boolean>;
}

/** Alerts raised for this store's account. */
export interface AlertsRepo {
  /**
   * Opens (alert, subject) for this account, unless it is open already on any instance (a unique
   * index: at most one open row each); undefined then.
   */
  open(a: NewAlert, now: Date): Promise<AlertRecord | undefined>;
  /** Resolves the open (alert, subject) of this account; undefined when none is open. */
  resolve(alert: AlertKind, subject: string, now: Date): Promise<AlertRecord | undefined>;
  /** Open alerts, oldest first (at most 500); every account's when `account` is absent. */
  listOpen(account?: string): Promise<AlertRecord[]>;
  /** This account's alerts, newest first. */
  list(filter: { alert?: AlertKind; limit?: number }): Promise<AlertRecord[]>;
}

/** API keys of every account, kept as the SHA-256 of the key. */
export interface ApiKeysRepo {
  /** Throws `UniqueViolationError` when the hash exists. */
  insert(
    k: { keyId: string; account: string; label: string | null; keyHash: string },
    now: Date,
  ): Promise<ApiKeyRecord>;
  /** The key with this hash (one indexed read, with its account's state), revoked ones included. */
  findByHash(keyHash: string): Promise<ApiKeyMatch | undefined>;
  /** The account's keys that are not revoked, oldest first. */
  list(account: string): Promise<ApiKeyRecord[]>;
  /** False when the account has no such key or it is revoked already. */
  revoke(account: string, keyId: string, now: Date): Promise<boolean>;
  /** Notes a use (callers do it at most about once a minute per key). */
  touch(keyId: string, now: Date): Promise<void>;
}

/**
 * The repositories a Store holds, by name. The Kysely store builds one of each from its table
 * (`kysely/store.ts`), and `STORE_ACCESS` classifies each one's methods.
 */
export interface Repositories {
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
  /** Operators who sign in by name, and their console sessions. */
  readonly operators: OperatorsRepo;
  /** The ERP events as a feed an ERP pulls. */
  readonly feed: FeedRepo;
  /** Imports of the gateway's reports. */
  readonly reconciliation: ReconciliationRepo;
  /** The accounts (merchants) the service serves. */
  readonly accounts: AccountsRepo;
  /** Alerts raised, at most one open per account, alert and subject. */
  readonly alerts: AlertsRepo;
  /** API keys of the accounts, by hash. */
  readonly apiKeys: ApiKeysRepo;
}

/** What instances tell each other has been committed: `erp_events`, a commit that made ERP events; `accounts`, a new account. */
export type SignalTopic = 'erp_events' | 'accounts';

/**
 * Word between the instances on one database that something was committed, so a waiter elsewhere
 * looks at once instead of at its next poll. PostgreSQL: LISTEN/NOTIFY on one connection per
 * store. SQLite: one process per database file, so there is nobody else to tell.
 */
export interface CommitSignals {
  /** Whether every other instance's announcements reach this one now; false: waiters must poll. */
  readonly live: boolean;
  /** Calls `fn` when another instance announces `topic` (and once when listening resumes); returns the unsubscribe. */
  listen(topic: SignalTopic, fn: () => void): () => void;
  /** Tells the other instances, after the commit; coalesced, never throws. */
  announce(topic: SignalTopic): void;
}

/**
 * The repositories, and the transaction that groups their calls.
 *
 * Where a write commits: inside `transaction(fn)`, every call through `tx` commits with the rest of
 * `fn`. A repository method called on the Store itself, outside any transaction, runs as its
 * `STORE_ACCESS` entry says. On SQLite a `write` runs as a transaction of its own that joins the
 * group commit: it shares one commit (one fsync) with the transactions of the same moment, in a
 * savepoint of its own, so it succeeds or fails alone and resolves only once committed. So
 * `store.transactions.update(…)` is a transaction there, although nothing at the call site says so.
 * On PostgreSQL, and for `autocommit` and `read` methods on both, the call goes straight to the
 * connection: each statement commits on its own unless the method opens a transaction itself.
 */
export interface Store extends Repositories {
  readonly kind: 'sqlite' | 'postgres';
  /** The account this view reads and writes (`default` for the store as opened). */
  readonly account: string;
  /** The same store as a view of `account`; inside a transaction, the same transaction. */
  forAccount(account: string): Store;
  /** Runs `fn` in one database transaction; everything `fn` does through `tx` commits or rolls back together. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
  /** Whether `cursor` is a list cursor this store hands out (a forged or foreign one is not). */
  isListCursor(cursor: string): boolean;
  /**
   * Whether `err`, thrown by a write or by a transaction, says that a unique key exists already:
   * a `UniqueViolationError`, or the database's own report of a unique violation.
   */
  isUniqueViolation(err: unknown): boolean;
  /** Word to and from the other instances on this database. */
  readonly signals: CommitSignals;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Which of this version's migrations the database has, and which it has that this version does not know. */
  migrationStatus(): Promise<MigrationStatus>;
  close(): Promise<void>;
}

/**
 * What each repository method does to the database when it is called on the Store outside a
 * transaction (see `Store`). `read`: straight to the connection. `write`: on SQLite, a transaction of
 * its own that joins the group commit (one fsync shared by the writes of a busy moment:
 * `kysely/group-commit.ts`, measured in docs/performance.md). `autocommit`: a write that commits on
 * its own, never waiting for a group. Every method is listed, so a new one cannot be left
 * unclassified.
 */
export type Access<R> = { readonly [K in keyof R]: 'read' | 'write' | 'autocommit' };

export const STORE_ACCESS: { readonly [K in keyof Repositories]: Access<Repositories[K]> } = {
  transactions: {
    insert: 'write',
    findById: 'read',
    findForUpdate: 'read',
    findByOrderId: 'read',
    findByGatewayOrderId: 'read',
    findByGatewayTransactionId: 'read',
    findManyByGatewayOrderIds: 'read',
    listMoneyMovedBetween: 'read',
    latestForMercant: 'read',
    listLinkPurchases: 'read',
    update: 'write',
    list: 'read',
    listOverduePending: 'read',
    countPendingPastExpiry: 'read',
    markChecked: 'write',
  },
  config: { get: 'read', put: 'write' },
  idempotency: { claim: 'write', complete: 'write', release: 'write', get: 'read', pruneExpired: 'write' },
  notifications: {
    record: 'write',
    setResult: 'write',
    findById: 'read',
    findByDedupeKey: 'read',
    findWithTransaction: 'read',
    listByResult: 'read',
    listUnverifiedForRecheck: 'read',
    markChecked: 'write',
    listForOrder: 'read',
    transactionSeen: 'read',
  },
  outbox: {
    enqueue: 'write',
    claimDue: 'write',
    complete: 'write',
    completeMany: 'write',
    findByEventId: 'read',
    list: 'read',
    attemptsFor: 'read',
    retryNow: 'write',
    countByState: 'read',
    oldestUndeliveredAt: 'read',
    releaseAllLeases: 'write',
    nextDueAt: 'read',
    inWindow: 'read',
    release: 'write',
    dueNow: 'write',
  },
  reports: { recordNew: 'write', findCurrent: 'read', findCurrentWith: 'read', recordNewIfUnchanged: 'write' },
  refunds: {
    insert: 'write',
    findById: 'read',
    listOpen: 'read',
    findByRequestKey: 'read',
    getApprovedTotal: 'read',
    claimLease: 'write',
    releaseLease: 'write',
    settleIdle: 'write',
    settle: 'write',
    listFor: 'read',
  },
  console: {
    searchTransactions: 'read',
    countsByStatus: 'read',
    paymentTypes: 'read',
    oldestUndelivered: 'read',
    lastNotification: 'read',
    notificationsFor: 'read',
    eventsForOrder: 'read',
    undeliverable: 'read',
  },
  retention: { pruneDelivered: 'write', pruneNotifications: 'write', pruneIdempotency: 'write' },
  // Counted outside any group: a failed login must not wait for (or share the fate of) other writes.
  authFailures: {
    get: 'read',
    fail: 'autocommit',
    clear: 'autocommit',
    lockedUntil: 'read',
    clearScope: 'autocommit',
    prune: 'autocommit',
  },
  operators: {
    insert: 'write',
    get: 'read',
    list: 'read',
    update: 'write',
    recordSignIn: 'autocommit',
    createSession: 'write',
    findSession: 'read',
    touchSession: 'autocommit',
    endSession: 'write',
    endSessionsOf: 'write',
    pruneSessions: 'autocommit',
  },
  feed: { identity: 'read', sequence: 'write', after: 'read', handedOut: 'write', acknowledge: 'write' },
  reconciliation: {
    begin: 'write',
    addRows: 'write',
    missingAtGateway: 'read',
    learnRows: 'read',
    keepMatchedFees: 'write',
    finish: 'write',
    discard: 'write',
    findDoneByFile: 'read',
    get: 'read',
    list: 'read',
    rows: 'read',
  },
  accounts: { insert: 'write', get: 'read', list: 'read', count: 'read', setMerchantId: 'write', disable: 'write' },
  // A use is noted outside any group: a request must not wait for another's commit to note it.
  alerts: { open: 'write', resolve: 'write', listOpen: 'read', list: 'read' },
  apiKeys: { insert: 'write', findByHash: 'read', list: 'read', revoke: 'write', touch: 'autocommit' },
};

export interface MigrationStatus {
  /** How many of this version's migrations are applied. */
  applied: number;
  /** This version's migrations the database does not have yet. */
  pending: string[];
  /** Migrations applied by a newer version (forward-only: an older instance still runs beside them). */
  unknown: string[];
}

export class UniqueViolationError extends Error {
  constructor(message = 'unique constraint violated') {
    super(message);
    this.name = 'UniqueViolationError';
  }
}
