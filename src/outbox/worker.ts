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
import type { Outbox } from '../types.js';

export type { Outbox } from '../types.js';
import type { Clock } from '../clock.js';
import type { Metrics } from '../metrics.js';
import type { Settings, RuntimeSettings } from '../settings.js';
import type { AttemptOutcome, OutboxEvent, Store } from '../storage/store.js';
import { deliver } from '../erp/deliver.js';
import { judge, type Verdict } from './policy.js';
import { guardedLookup, literalRefusal } from '../erp/guard.js';

export interface OutboxDeps {
  store: Store;
  settings: Settings;
  clock: Clock;
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
  /** Events claimed per round. Default 16. */
  batchSize?: number;
  /** Deliveries in parallel (always different orders). Default 8. */
  concurrency?: number;
  random?: () => number;
  /** Refuse ERP URLs that are or resolve to private addresses (production). Default false. Link-local and metadata addresses are refused always. */
  blockPrivateAddresses?: boolean;
  /** Tests: the name resolver behind the connect-time address check (default `dns.lookup`). */
  resolve?: Parameters<typeof guardedLookup>[1];
  /** Tests: runs between the HTTP answer and recording it (e.g. to stall past the lease). */
  beforeComplete?: (e: OutboxEvent) => Promise<void>;
}


const MIN_IDLE_MS = 200;

async function forEachLimited<T>(items: T[], limit: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

export function createOutbox(deps: OutboxDeps, o: OutboxOptions = {}): Outbox {
  const instanceId = o.instanceId ?? `${os.hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const random = o.random ?? Math.random;
  const events = new EventEmitter();
  events.setMaxListeners(0);
  let dispatcher: Dispatcher | undefined;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;
  let depthAt = 0;
  const log = deps.logger;

  const blockPrivate = o.blockPrivateAddresses ?? false;
  const getDispatcher = () => (dispatcher ??= new Agent({ connect: { timeout: 5_000, lookup: guardedLookup(blockPrivate, o.resolve) }, keepAliveTimeout: 4_000 }));

  /**
   * Delivers `e` and starts recording the result; resolves once the HTTP answer is judged, with the
   * recording still under way, so the lane moves on to its next event while the result waits for
   * its commit (on SQLite the lanes' results then share one).
   */
  async function attempt(e: OutboxEvent, url: string, s: RuntimeSettings): Promise<{ recorded: Promise<void> }> {
    const startedAt = deps.clock.now();
    const refused = literalRefusal(url, blockPrivate);
    const res = refused
      ? { statusCode: null, error: refused === 'private' ? 'refused: private address' : 'refused: link-local or metadata address', latencyMs: 0 }
      : await deliver({ url, secret: s.erp.webhook_secret, eventId: e.eventId, body: e.payload, timeoutMs: s.erp.timeout_ms, sentAt: new Date() }, getDispatcher());
    deps.metrics.deliveryDuration.observe(res.latencyMs / 1000);
    const now = deps.clock.now();
    const v = judge({ statusCode: res.statusCode, retryAfter: res.retryAfter, failures: e.attempts + 1, now, retryFrom: new Date(e.retryFrom), retryForHours: s.erp.retry_for_hours, random });
    await o.beforeComplete?.(e);
    const error = v.state === 'dead' ? `${res.error ?? 'failed'}; ${v.reason}` : res.error;
    return { recorded: record(e, v, res, startedAt, error) };
  }

  async function record(e: OutboxEvent, v: Verdict, res: { statusCode: number | null; latencyMs: number }, startedAt: Date, error: string | null): Promise<void> {
    const kept = await deps.store.outbox.complete(e.seq, e.leaseToken, instanceId, {
      state: v.state,
      nextAttemptAt: v.state === 'failed' ? v.nextAttemptAt.toISOString() : undefined,
      startedAt: startedAt.toISOString(),
      statusCode: res.statusCode,
      latencyMs: res.latencyMs,
      error,
    });
    const outcome: AttemptOutcome = kept ? v.state : 'rejected_stale_lease';
    deps.metrics.deliveries.inc({ outcome });
    events.emit(`attempt:${e.seq}`, outcome);
    const fields = { event_id: e.eventId, order_id: e.orderId, mercant_id: e.mercantId, attempt: e.attempts + 1, outcome, http_status: res.statusCode, latency_ms: res.latencyMs, error, next_attempt_at: v.state === 'failed' ? v.nextAttemptAt.toISOString() : undefined };
    if (outcome === 'dead') log.error(fields, "ERP event dead: not retried any more; the order's later events wait behind it until it is retried by hand (POST /api/deliveries/{id}/retry) and delivered");
    else if (outcome === 'rejected_stale_lease') log.warn(fields, 'ERP delivery result rejected: this instance lost the lease');
    else log.info(fields, outcome === 'delivered' ? 'ERP event delivered' : 'ERP delivery failed; retry scheduled');
  }

  async function runOnce(): Promise<number> {
    const s = await deps.settings.current();
    const url = s.erp.notify_url;
    if (!url) return 0;
    const batch = o.batchSize ?? 16;
    const lanes = o.concurrency ?? 8;
    // Each lane delivers its share of the batch one after another, each attempt up to the ERP
    // timeout plus the time to record it: the lease outlasts the slowest lane, with room to spare.
    const leaseMs = o.leaseMs ?? Math.ceil(batch / lanes) * (s.erp.timeout_ms + 1_000) + 5_000;
    const claimed = await deps.store.outbox.claimDue(instanceId, deps.clock.now(), leaseMs, batch);
    const recorded: Promise<void>[] = [];
    // The lease runs out and the event is claimed again: at least once, never lost.
    const unrecorded = (e: OutboxEvent) => (err: unknown) => log.error({ err: { message: err instanceof Error ? err.message : String(err) }, event_id: e.eventId }, 'ERP delivery could not be recorded');
    await forEachLimited(claimed, lanes, async (e) => {
      try {
        recorded.push((await attempt(e, url, s)).recorded.catch(unrecorded(e)));
      } catch (err) {
        unrecorded(e)(err);
      }
    });
    await Promise.all(recorded);
    return claimed.length;
  }

  async function refreshDepth(): Promise<void> {
    const counts = await deps.store.outbox.countByState();
    for (const [state, n] of Object.entries(counts)) deps.metrics.outboxDepth.set({ state }, n);
  }

  async function idleDelay(pollMs: number): Promise<number> {
    const due = await deps.store.outbox.nextDueAt();
    if (due === undefined) return pollMs;
    return Math.min(pollMs, Math.max(MIN_IDLE_MS, Date.parse(due) - deps.clock.now().getTime()));
  }

  function schedule(ms: number): void {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void tick(), ms);
    timer.unref();
  }

  async function round(): Promise<number> {
    try {
      const n = await runOnce();
      if (Date.now() - depthAt > 5_000) {
        depthAt = Date.now();
        await refreshDepth();
      }
      return n;
    } catch (err) {
      log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'outbox round failed; retrying after the poll interval');
      return 0;
    }
  }

  async function tick(): Promise<void> {
    if (ticking) {
      again = true;
      return;
    }
    const pollMs = o.pollMs ?? 5_000;
    ticking = (async () => {
      again = false;
      const n = await round();
      if (!running) return;
      if (again || n > 0) schedule(0);
      else schedule(await idleDelay(pollMs).catch(() => pollMs));
    })();
    try {
      await ticking;
    } finally {
      ticking = undefined;
    }
  }

  return {
    name: 'outbox',
    instanceId,
    start() {
      if (running) return;
      running = true;
      if (deps.store.kind !== 'sqlite') return schedule(0);
      deps.store.outbox.releaseAllLeases().then(
        (n) => {
          if (n > 0) log.warn({ released: n }, 'outbox: leases left by a previous run released (SQLite: this process owns the file)');
          schedule(0);
        },
        () => schedule(0),
      );
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await ticking?.catch(() => undefined);
      await dispatcher?.close().catch(() => undefined);
      dispatcher = undefined;
    },
    wake() {
      if (!running) return;
      if (ticking) again = true;
      else schedule(0);
    },
    runOnce,
    async drain(maxRounds = 1000) {
      let total = 0;
      for (let i = 0; i < maxRounds; i++) {
        const n = await runOnce();
        if (n === 0) break;
        total += n;
      }
      return total;
    },
    waitForAttempt(seq, afterAttempts, timeoutMs) {
      return waitForAttempt(deps.store, events, seq, afterAttempts, timeoutMs);
    },
    refreshDepth,
  };
}

/** In-process attempts resolve at once; attempts by another instance are seen by polling the table. */
function waitForAttempt(store: Store, events: EventEmitter, seq: number, afterAttempts: number, timeoutMs: number): Promise<AttemptOutcome | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: AttemptOutcome | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      clearInterval(poll);
      events.off(`attempt:${seq}`, finish);
      resolve(v);
    };
    events.on(`attempt:${seq}`, finish);
    const deadline = setTimeout(() => finish(undefined), timeoutMs);
    const poll = setInterval(() => {
      store.outbox.attemptsFor([seq]).then(
        (list) => {
          const next = list[afterAttempts];
          if (next) finish(next.outcome);
        },
        () => undefined,
      );
    }, 250);
  });
}
