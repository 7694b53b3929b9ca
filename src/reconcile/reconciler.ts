/**
 * The sweeper: a lost notification must never leave an order pending forever. Every
 * `reconcile.interval_s` it asks the gateway about transactions still pending past their expiry or
 * past `reconcile.pending_after_minutes` without news, and re-checks notifications recorded as
 * `unverified`; what it learns goes through the same pipeline as a notification. At most
 * `ratePerSecond` (default 5) status calls per second per instance; several instances may sweep at
 * once (the status machine makes a repeated answer a no-op).
 */
import type { Logger } from 'pino';
import type { BackgroundWorker, Deps } from '../types.js';
import { systemClock, type Clock } from '../clock.js';
import { recheckUnverified, refreshFromGateway, type RefreshDeps } from '../domain/notification-sources.js';
import { GatewayError } from '../gateway/errors.js';

/** What a sweep uses: the settings, and what asking the gateway and recording its answer need. */
export type ReconcilerDeps = RefreshDeps & Deps<'settings'>;

export interface ReconcilerOptions {
  /** Gateway status calls per second, default 5. */
  ratePerSecond?: number;
  /** Transactions per sweep, default 200. */
  batchSize?: number;
  /** Waits between calls; tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
  /** Real time between two status calls, for the pacing (the injected `clock` may stand still in tests). Default: the system clock. */
  wallClock?: Clock;
}

export interface SweepReport {
  checked: number;
  outcomes: Record<string, number>;
  errors: number;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
/** Unverified notifications re-checked per sweep. */
const RECHECKS_PER_SWEEP = 50;

/**
 * `sweepOnce` is one sweep (a call during a running sweep shares it); `start` sweeps every
 * `reconcile.interval_s`, the first time after 5 s. Times come from the injected clocks only:
 * `services.clock` for what is due, `wallClock` for pacing the gateway calls.
 */
export class Reconciler implements BackgroundWorker {
  readonly name = 'reconciler';
  private readonly log: Logger;
  private readonly gapMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly wallClock: Clock;
  private running = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<SweepReport> | undefined;
  private lastCallAt = 0;

  constructor(
    private readonly services: ReconcilerDeps,
    private readonly o: ReconcilerOptions = {},
  ) {
    this.log = services.logger.child({ component: 'reconciler' });
    this.gapMs = 1000 / (o.ratePerSecond ?? 5);
    this.sleep = o.sleep ?? realSleep;
    this.wallClock = o.wallClock ?? systemClock;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    // The first sweep waits a little, so start-up is not a burst of gateway calls.
    this.schedule(5_000);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.sweeping?.catch(() => undefined);
  }

  async sweepOnce(): Promise<SweepReport> {
    this.sweeping ??= this.sweep();
    try {
      return await this.sweeping;
    } finally {
      this.sweeping = undefined;
    }
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.loop(), ms);
    this.timer.unref();
  }

  private async loop(): Promise<void> {
    let intervalS = 300;
    try {
      await this.sweepOnce();
    } catch (err) {
      this.log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'reconcile sweep failed');
    }
    try {
      intervalS = (await this.services.settings.current()).reconcile.interval_s;
    } catch {
      // database unavailable: keep the default interval
    }
    if (this.running) this.schedule(Math.max(1, intervalS) * 1000);
  }

  private async sweep(): Promise<SweepReport> {
    const report: SweepReport = { checked: 0, outcomes: {}, errors: 0 };
    await this.refreshOverdue(report);
    await this.recheckUnverified(report);
    if (report.checked > 0 || report.errors > 0) this.log.info({ reconcile: report }, 'reconcile sweep done');
    return report;
  }

  /** Pending transactions past their expiry, or without news for `reconcile.pending_after_minutes`. */
  private async refreshOverdue(report: SweepReport): Promise<void> {
    const { services } = this;
    const s = await services.settings.current();
    const now = services.clock.now();
    const createdBefore = new Date(now.getTime() - s.reconcile.pending_after_minutes * 60_000).toISOString();
    const due = await services.store.transactions.listOverduePending(now.toISOString(), createdBefore, this.o.batchSize ?? 200);
    for (const tx of due) {
      if (this.stopped) break;
      try {
        const r = await this.paced(() => refreshFromGateway(services, tx, 'reconcile'));
        report.outcomes[r.outcome] = (report.outcomes[r.outcome] ?? 0) + 1;
      } catch (err) {
        report.errors++;
        const kind = err instanceof GatewayError ? err.kind : 'error';
        this.log.warn({ order_id: tx.orderId, error: kind, err: err instanceof GatewayError ? undefined : { message: String(err) } }, 'reconcile: status check failed; tried again next sweep');
      }
      // To the back of the queue, whatever the answer: an order the gateway keeps not knowing must
      // not hold back the others.
      await services.store.transactions.markChecked(tx.id, services.clock.now().toISOString()).catch(() => undefined);
      report.checked++;
    }
  }

  private async recheckUnverified(report: SweepReport): Promise<void> {
    const { services } = this;
    for (const n of await services.store.notifications.listUnverifiedForRecheck(RECHECKS_PER_SWEEP)) {
      if (this.stopped) break;
      try {
        if (await this.paced(() => recheckUnverified(services, n))) report.outcomes.rechecked = (report.outcomes.rechecked ?? 0) + 1;
      } catch {
        report.errors++;
      }
      // To the back of the queue as well: fifty whose check keeps failing must not starve newer ones.
      await services.store.notifications.markChecked(n.id, services.clock.now().toISOString()).catch(() => undefined);
    }
  }

  private async paced<T>(fn: () => Promise<T>): Promise<T> {
    const wait = this.lastCallAt + this.gapMs - this.wallClock.now().getTime();
    if (wait > 0) await this.sleep(wait);
    this.lastCallAt = this.wallClock.now().getTime();
    return fn();
  }
}

export function createReconciler(services: ReconcilerDeps, o: ReconcilerOptions = {}): Reconciler {
  return new Reconciler(services, o);
}
