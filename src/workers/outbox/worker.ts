/**
 * Delivers ERP events from the outbox: claims due events under a lease (PostgreSQL: SKIP LOCKED,
 * so instances share one outbox), delivers outside any database transaction, records the attempt
 * only if the lease's fencing token is still current. Woken in-process right after an event is
 * committed; a slow poll is the safety net (other instances' events, retries coming due).
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Agent, type Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Outbox } from '../../types.js';
import { systemClock, type Clock } from '../../platform/clock.js';
import type { Metrics } from '../../platform/metrics.js';
import type { RuntimeConfigService } from '../../config/runtime.js';
import type { Store } from '../../storage/contract.js';
import type { AttemptOutcome, AttemptResult, OutboxEvent } from '../../model/delivery.js';
import { accountLabel } from '../../model/account.js';
import { deliver } from '../../erp/deliver.js';
import { judge, type Verdict } from './policy.js';
import { guardedLookup, literalRefusal } from '../../platform/connect-guard.js';
import type { PrivatePolicy } from '../../platform/url-policy.js';
import { forEachLimited, freeLanes, waitForAttempt } from './lanes.js';
import { EndpointWatch } from './endpoints.js';
import { bodyFor, targetsNow, type Target } from './targets.js';
import { accountCount } from '../../domain/accounts/events.js';
import { Periodic } from '../periodic.js';
import { failSpan, setSpanAttributes, tracingOn, withSpan } from '../../platform/tracing.js';

export type { Outbox } from '../../types.js';

export interface OutboxDeps {
  store: Store;
  runtimeConfig: RuntimeConfigService;
  clock: Clock;
  /** Wall-clock time for the signature timestamp the ERP checks against its own clock. Default: the system clock. */
  wallClock?: Clock;
  logger: Logger;
  metrics: Metrics;
}

export interface OutboxOptions {
  /** Names this instance in leases and attempt records. Default host:pid:random. */
  instanceId?: string;
  /** Lease per claim, ms. Default max(5 s, 2 × erp.timeout_ms + 2 s): longer than any attempt can take. */
  leaseMs?: number;
  /** Safety-net poll, ms. Default 5000. */
  pollMs?: number;
  /**
   * Events claimed per round. Default 2 × `concurrency` (at least 32), two per lane: a round's
   * claim and its results each cost a commit (an fsync on SQLite), so fuller rounds drain a backlog
   * faster, while each lane's share of the lease (how long a crashed instance's claimed events wait
   * on PostgreSQL) stays two events.
   */
  batchSize?: number;
  /**
   * Deliveries in parallel at most (always different orders), shared by the accounts: each takes
   * up to its fair share, more only when the others leave lanes free, never the last lane another
   * needs; and each endpoint no more than its window (window.ts: starts at 16, grows while the
   * endpoint answers 2xx without slowing down, shrinks when it fails or slows). Default
   * `DEFAULT_MAX_LANES` (`OUTBOX_MAX_LANES`).
   */
  concurrency?: number;
  random?: () => number;
  /**
   * Refuse ERP URLs that are or resolve to private addresses (production), except those in allowed
   * networks (`ERP_ALLOW_PRIVATE_NETWORKS`). Default false. Link-local and metadata addresses are refused always.
   */
  blockPrivateAddresses?: PrivatePolicy;
  /** Tests: the name resolver behind the connect-time address check (default `dns.lookup`). */
  resolve?: Parameters<typeof guardedLookup>[1];
  /** Tests: runs between the HTTP answer and recording it (e.g. to stall past the lease). */
  beforeComplete?: (e: OutboxEvent) => Promise<void>;
}

const MIN_IDLE_MS = 200;
/**
 * Lanes in total unless configured: an ERP answering in 200 ms can then take 640 events/s, enough
 * to drain a two-minute burst of 300/s within a minute of its end, while each endpoint starts at
 * 16 and gets more only while it answers as fast with more.
 */
export const DEFAULT_MAX_LANES = 128;

/**
 * Results recorded in one go at most. The lanes' results that arrive while one batch is being
 * written wait for the next: a batch is one transaction (SQLite: one savepoint in a group commit
 * instead of one per result) or one statement (PostgreSQL: one round trip instead of one per result).
 */
const MAX_RESULTS_PER_BATCH = 256;

interface PendingResult {
  seq: number;
  leaseToken: number;
  result: AttemptResult;
  resolve: (kept: boolean) => void;
  reject: (err: unknown) => void;
}

/** What an attempt's HTTP exchange came to, before it is recorded. */
interface Exchange {
  statusCode: number | null;
  latencyMs: number;
}

/**
 * The worker: `runOnce` is one claim-and-deliver round. Started, it runs rounds back to back while
 * they find work, at once when woken, and otherwise when the next event is due (at most the poll
 * interval, at least 200 ms after an idle round). Times come from the injected
 * clocks only: `clock` for leases and retry times, `wallClock` for what another machine checks
 * against its own clock (the signature timestamp) and for pacing the depth gauge.
 */
class OutboxWorker implements Outbox {
  readonly name = 'outbox';
  readonly instanceId: string;
  private readonly random: () => number;
  private readonly wallClock: Clock;
  private readonly blockPrivate: PrivatePolicy;
  private readonly log: Logger;
  private readonly events = new EventEmitter();
  /** One HTTP agent for this worker's deliveries (with the connect-time address check), closed on stop. */
  private dispatcher: Dispatcher | undefined;
  private readonly periodic: Periodic;
  private releaseLeasesFirst = false;
  private depthAt = 0;
  /** Lanes each account holds now (its deliveries under way in this instance). */
  private readonly inUse = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Turns the accounts' order each round, so no account is always served first. */
  private turn = 0;
  private readonly endpoints: EndpointWatch;
  /** Results waiting to be recorded, and whether a batch of them is being written now. */
  private results: PendingResult[] = [];
  private recording = false;
  /** Lanes at most, shared by every endpoint. */
  private readonly total: number;

  constructor(
    private readonly deps: OutboxDeps,
    private readonly o: OutboxOptions = {},
  ) {
    this.instanceId = o.instanceId ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
    this.random = o.random ?? Math.random;
    this.wallClock = deps.wallClock ?? systemClock;
    this.blockPrivate = o.blockPrivateAddresses ?? false;
    this.total = Math.max(1, Math.floor(o.concurrency ?? DEFAULT_MAX_LANES));
    this.log = deps.logger;
    this.events.setMaxListeners(0);
    this.endpoints = new EndpointWatch(deps, this.random, () => this.wake());
    const pollMs = o.pollMs ?? 5_000;
    this.periodic = new Periodic({
      name: this.name,
      logger: this.log,
      clock: deps.clock,
      firstDelayMs: 0,
      tick: () => this.tick(),
      nextDelayMs: () => this.idleDelay(pollMs),
      fallbackDelayMs: pollMs,
      failureMessage: 'outbox round failed; retried at the next due time or poll',
    });
  }

  start(): void {
    if (this.periodic.running) return;
    // SQLite: this process owns the file, so leases still held were left by a previous run.
    this.releaseLeasesFirst = this.deps.store.kind === 'sqlite';
    this.periodic.start();
  }

  async stop(): Promise<void> {
    await this.periodic.stop();
    await Promise.all([...this.inFlight]);
    await this.dispatcher?.close().catch(() => undefined);
    this.dispatcher = undefined;
  }

  wake(): void {
    this.periodic.wake();
  }

  async runOnce(): Promise<number> {
    const round = await this.dispatch();
    await round.done;
    return round.claimed;
  }

  /**
   * One round: each lane (an account's ERP, an account's alert receiver) claims its own due events
   * for the lanes it may take (`freeLanes`), in an order that turns each round, and delivers them
   * by lanes of its own. Resolves once everything is claimed and started; `done` once delivered
   * and recorded. A started worker does not wait for `done`: an endpoint that answers slowly keeps
   * its lanes busy while the next round serves the others.
   */
  private async dispatch(): Promise<{ claimed: number; done: Promise<void> }> {
    const targets = await targetsNow(this.deps.store, this.deps.runtimeConfig);
    const keys = [...targets.keys()];
    if (keys.length === 0) return { claimed: 0, done: Promise.resolve() };
    const turn = this.turn++ % keys.length;
    const order = [...keys.slice(turn), ...keys.slice(0, turn)];
    const total = this.total;
    const perLane = Math.max(1, Math.ceil((this.o.batchSize ?? Math.max(32, 2 * total)) / total));
    const groups: Promise<void>[] = [];
    const hadMore = new Set<string>();
    let claimed = 0;
    for (const pass of [1, 2] as const)
      for (const key of order) {
        const t = targets.get(key);
        if (!t || (pass === 2 && !hadMore.has(key))) continue;
        const g = this.endpoints.gate(t);
        // A paced lane is served by one group at a time: the pace, not the lanes, bounds it, and
        // its backlog then leaves strictly in the order written.
        if (g.kind === 'wait' || (t.ratePerS && this.inUse.has(key))) continue;
        let lanes = Math.min(
          freeLanes(key, this.inUse, keys, total, pass),
          this.endpoints.lanes(t, total) - (this.inUse.get(key) ?? 0),
        );
        if (lanes <= 0) continue;
        const rate = t.ratePerS;
        // An open breaker lets one probe through; a rate claims about two seconds' worth at a time.
        let limit = g.kind === 'probe' ? 1 : lanes * perLane;
        if (rate) limit = Math.min(limit, Math.max(1, Math.ceil(rate * 2)));
        if (g.kind === 'probe') lanes = 1;
        // Each lane delivers its share one after another, each attempt up to the timeout plus the
        // time to record it (and the pace's waits): the lease outlasts the slowest lane.
        const leaseMs =
          this.o.leaseMs ?? perLane * (t.timeoutMs + 1_000) + 5_000 + (rate ? Math.ceil((limit / rate) * 1_000) : 0);
        const now = this.deps.clock.now();
        const events = await this.deps.store.outbox.claimDue(this.instanceId, now, leaseMs, limit, t.account, t.lane);
        if (events.length === limit && g.kind === 'closed' && !rate) hadMore.add(key);
        else hadMore.delete(key);
        if (events.length === 0) continue;
        if (g.kind === 'probe') this.endpoints.startProbe(t);
        claimed += events.length;
        groups.push(
          this.deliverGroup(t, events, Math.min(lanes, Math.ceil(events.length / perLane)), g.kind === 'probe'),
        );
      }
    return { claimed, done: Promise.all(groups).then(() => undefined) };
  }

  /**
   * Delivers one lane's claimed events by `lanes` lanes; the lanes are held until every result is
   * recorded. While the endpoint's breaker is open an event not yet started is not attempted: its
   * lease is given back, and it waits for the probe.
   */
  private deliverGroup(t: Target, events: OutboxEvent[], lanes: number, probe: boolean): Promise<void> {
    this.inUse.set(t.key, (this.inUse.get(t.key) ?? 0) + lanes);
    // The lease runs out and the event is claimed again: at least once, never lost.
    const unrecorded = (e: OutboxEvent) => (err: unknown) =>
      this.log.error(
        { err: { message: err instanceof Error ? err.message : String(err) }, event_id: e.eventId },
        'delivery could not be recorded',
      );
    const paused = () => !probe && this.endpoints.gate(t).kind !== 'closed';
    const group = (async () => {
      const recorded: Promise<void>[] = [];
      try {
        await forEachLimited(events, lanes, async (e) => {
          try {
            if (paused() || ((await this.endpoints.paced(t)) && paused())) {
              recorded.push(this.deps.store.outbox.release(e.seq, e.leaseToken).then(() => undefined, unrecorded(e)));
              return;
            }
            recorded.push((await this.attempt(t, e, probe)).recorded.catch(unrecorded(e)));
          } catch (err) {
            unrecorded(e)(err);
          }
          // undici (pipelining 1) hands a connection its next request one turn of the event loop
          // after the answer (setImmediate); a lane sending its next at once finds every
          // connection busy and opens another. Waiting that turn keeps one connection per lane:
          // without it, 18 requests at once had opened 36 connections (a fast ERP, SQLite drain).
          await new Promise<void>((resolve) => setImmediate(resolve));
        });
        await Promise.all(recorded);
      } finally {
        const left = (this.inUse.get(t.key) ?? lanes) - lanes;
        if (left > 0) this.inUse.set(t.key, left);
        else this.inUse.delete(t.key);
        this.wake();
      }
    })().finally(() => this.inFlight.delete(group));
    this.inFlight.add(group);
    return group;
  }

  async drain(maxRounds = 1000): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.runOnce();
      if (n === 0) break;
      total += n;
    }
    return total;
  }

  waitForAttempt(seq: number, afterAttempts: number, timeoutMs: number): Promise<AttemptOutcome | undefined> {
    return waitForAttempt(this.deps.store, this.events, seq, afterAttempts, timeoutMs);
  }

  async refreshDepth(): Promise<void> {
    const counts = await this.deps.store.outbox.countByState();
    for (const [state, n] of Object.entries(counts)) this.deps.metrics.outboxDepth.set({ state }, n);
    // One series per account (the accounts table bounds the labels), each two index seeks.
    const store = this.deps.store;
    const accounts =
      (await accountCount(store)) <= 1 ? [store.account] : (await store.accounts.list()).map((a) => a.id);
    const now = this.deps.clock.now().getTime();
    for (const account of accounts) {
      const oldest = await store.outbox.oldestUndeliveredAt(account);
      const age = oldest === undefined ? 0 : (now - Date.parse(oldest)) / 1000;
      this.deps.metrics.outboxOldestPending.set(accountLabel(account), Math.max(0, age));
    }
  }

  private agent(): Dispatcher {
    this.dispatcher ??= new Agent({
      connect: { timeout: 5_000, lookup: guardedLookup(this.blockPrivate, this.o.resolve) },
      keepAliveTimeout: 4_000,
      // One request per connection at a time (a slow answer never holds up the next event), and a
      // connection per lane: no lane waits for another's socket.
      pipelining: 1,
      connections: this.total,
    });
    return this.dispatcher;
  }

  /**
   * Delivers `e` and starts recording the result; resolves once the HTTP answer is judged, with the
   * recording still under way, so the lane moves on to its next event while the result waits for
   * its commit (on SQLite the lanes' results then share one).
   */
  private attempt(t: Target, e: OutboxEvent, probe: boolean): Promise<{ recorded: Promise<void> }> {
    // A child of the work that wrote the event (its stored trace context): a retry hours later
    // still joins the payment's trace.
    return withSpan(
      t.lane === 'alert' ? 'alert delivery attempt' : 'ERP delivery attempt',
      {
        'paylink.account': e.account,
        'paylink.event_id': e.eventId,
        'paylink.event_type': e.eventType,
        'paylink.order_id': e.orderId,
        'paylink.gateway_order_id': tracingOn() ? gatewayOrderIdOf(e.payload) : undefined,
        'paylink.attempt': e.attempts + 1,
      },
      () => this.attemptInSpan(t, e, probe),
      { parent: e.traceContext },
    );
  }

  private async attemptInSpan(t: Target, e: OutboxEvent, probe: boolean): Promise<{ recorded: Promise<void> }> {
    const startedAt = this.deps.clock.now();
    const refused = literalRefusal(t.url, this.blockPrivate);
    const res = refused
      ? {
          statusCode: null,
          error: refused === 'private' ? 'refused: private address' : 'refused: link-local or metadata address',
          latencyMs: 0,
        }
      : await deliver(
          {
            url: t.url,
            secret: t.secret,
            eventId: e.eventId,
            body: bodyFor(t, e.payload),
            timeoutMs: t.timeoutMs,
            sentAt: this.wallClock.now(),
          },
          this.agent(),
        );
    this.deps.metrics.deliveryDuration.observe(res.latencyMs / 1000);
    const now = this.deps.clock.now();
    const v = judge({
      statusCode: res.statusCode,
      retryAfter: res.retryAfter,
      failures: e.attempts + 1,
      now,
      retryFrom: new Date(e.retryFrom),
      retryForHours: t.retryForHours,
      random: this.random,
    });
    // An answer that came after the event's lease ran out (the lease outlasts every attempt its
    // lane can make, so this instance was stalled: paused, or its clock stopped) says nothing of
    // the endpoint now: a timeout measured across the stall would open the breaker, and the rest of
    // the claim would go unattempted instead of being tried and its stale results refused. A
    // probe's answer always counts: the breaker waits for it.
    const stale = e.leaseUntil !== null && now.getTime() > Date.parse(e.leaseUntil);
    if (probe || !stale) {
      const ok = v.state === 'delivered';
      const held = this.inUse.get(t.key) ?? 0;
      this.endpoints.adaptLanes(t, { ok, latencyMs: res.latencyMs, held, now: now.getTime() }, this.total);
      await this.endpoints.afterAttempt(t, ok, probe, now);
    }
    await this.o.beforeComplete?.(e);
    const error = v.state === 'dead' ? `${res.error ?? 'failed'}; ${v.reason}` : res.error;
    setSpanAttributes({ 'paylink.outcome': v.state, 'http.response.status_code': res.statusCode ?? undefined });
    if (error !== null) failSpan(error);
    return { recorded: this.record(t, e, v, res, startedAt, error) };
  }

  private async record(
    t: Target,
    e: OutboxEvent,
    v: Verdict,
    res: Exchange,
    startedAt: Date,
    error: string | null,
  ): Promise<void> {
    const kept = await this.completeBatched(e, {
      state: v.state,
      nextAttemptAt: v.state === 'failed' ? v.nextAttemptAt.toISOString() : undefined,
      startedAt: startedAt.toISOString(),
      statusCode: res.statusCode,
      latencyMs: res.latencyMs,
      error,
    });
    const outcome: AttemptOutcome = kept ? v.state : 'rejected_stale_lease';
    this.deps.metrics.deliveries.inc({ outcome, ...accountLabel(e.account) });
    this.events.emit(`attempt:${e.seq}`, outcome);
    const fields = {
      event_id: e.eventId,
      order_id: e.orderId,
      mercant_id: e.mercantId,
      attempt: e.attempts + 1,
      outcome,
      http_status: res.statusCode,
      latency_ms: res.latencyMs,
      error,
      next_attempt_at: v.state === 'failed' ? v.nextAttemptAt.toISOString() : undefined,
    };
    if (outcome === 'dead' && t.lane === 'alert')
      this.log.error(fields, 'alert notification dead: not retried any more');
    else if (outcome === 'dead') {
      if (await this.endpoints.raiseDead(e, error)) this.wake();
      this.log.error(
        fields,
        "ERP event dead: not retried any more; the order's later events wait behind it until it is retried by hand (POST /api/deliveries/{id}/retry) and delivered",
      );
    } else if (outcome === 'rejected_stale_lease')
      this.log.warn(fields, 'ERP delivery result rejected: this instance lost the lease');
    else if (t.lane === 'alert')
      this.log.info(fields, outcome === 'delivered' ? 'alert delivered' : 'alert delivery failed; retry scheduled');
    else
      this.log.info(fields, outcome === 'delivered' ? 'ERP event delivered' : 'ERP delivery failed; retry scheduled');
  }

  /** Records a result with the others that arrive meanwhile (`completeMany`); each fenced as alone. */
  private completeBatched(e: OutboxEvent, result: AttemptResult): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.results.push({ seq: e.seq, leaseToken: e.leaseToken, result, resolve, reject });
      if (this.recording) return;
      this.recording = true;
      // The results of the same turn of the event loop join the first batch.
      setImmediate(() => void this.recordResults());
    });
  }

  private async recordResults(): Promise<void> {
    const outbox = this.deps.store.outbox;
    try {
      while (this.results.length > 0) {
        const batch = this.results.splice(0, MAX_RESULTS_PER_BATCH);
        try {
          const kept = await outbox.completeMany(
            this.instanceId,
            batch.map(({ seq, leaseToken, result }) => ({ seq, leaseToken, result })),
          );
          batch.forEach((r, i) => r.resolve(kept[i] === true));
        } catch {
          // Nothing of the batch was written: each on its own, so one that cannot be recorded
          // does not hold back the others (its lease runs out and it is delivered again).
          await Promise.all(
            batch.map((r) => outbox.complete(r.seq, r.leaseToken, this.instanceId, r.result).then(r.resolve, r.reject)),
          );
        }
      }
    } finally {
      this.recording = false;
    }
  }

  private async idleDelay(pollMs: number): Promise<number> {
    const due = await this.deps.store.outbox.nextDueAt();
    if (due === undefined) return pollMs;
    return Math.min(pollMs, Math.max(MIN_IDLE_MS, Date.parse(due) - this.deps.clock.now().getTime()));
  }

  /** A tick: one round, then the depth gauge at most every 5 s; true when the round found work. */
  private async tick(): Promise<boolean> {
    if (this.releaseLeasesFirst) {
      this.releaseLeasesFirst = false;
      const n = await this.deps.store.outbox.releaseAllLeases().catch(() => 0);
      if (n > 0)
        this.log.warn(
          { released: n },
          'outbox: leases left by a previous run released (SQLite: this process owns the file)',
        );
    }
    const { claimed: n } = await this.dispatch();
    const t = this.wallClock.now().getTime();
    if (t - this.depthAt > 5_000) {
      this.depthAt = t;
      await this.refreshDepth();
    }
    return n > 0;
  }
}

/** The gateway's order id an event's body names, for its delivery spans; undefined for a body without one. */
function gatewayOrderIdOf(payload: string): string | undefined {
  try {
    const id = (JSON.parse(payload) as { gateway_order_id?: unknown }).gateway_order_id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

export function createOutbox(deps: OutboxDeps, o: OutboxOptions = {}): Outbox {
  return new OutboxWorker(deps, o);
}
