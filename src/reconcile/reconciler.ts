/**
 * The sweeper: a lost notification must never leave an order pending forever. Every
 * `reconcile.interval_s` it asks the gateway about transactions still pending past their expiry or
 * past `reconcile.pending_after_minutes` without news, and re-checks notifications recorded as
 * `unverified`; what it learns goes through the same pipeline as a notification. At most
 * `ratePerSecond` (default 5) status calls per second per instance; several instances may sweep at
 * once (the status machine makes a repeated answer a no-op).
 */
import type { BackgroundWorker, Services } from '../types.js';
import { recheckUnverified, refreshFromGateway } from '../domain/notification-sources.js';
import { GatewayError } from '../gateway/errors.js';

export interface ReconcilerOptions {
  /** Gateway status calls per second, default 5. */
  ratePerSecond?: number;
  /** Transactions per sweep, default 200. */
  batchSize?: number;
  /** Waits between calls; tests pass a fake. */
  sleep?: (ms: number) => Promise<void>;
}

export interface SweepReport {
  checked: number;
  outcomes: Record<string, number>;
  errors: number;
}

export interface Reconciler extends BackgroundWorker {
  sweepOnce(): Promise<SweepReport>;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

export function createReconciler(services: Services, o: ReconcilerOptions = {}): Reconciler {
  const gapMs = 1000 / (o.ratePerSecond ?? 5);
  const sleep = o.sleep ?? realSleep;
  const log = services.logger.child({ component: 'reconciler' });
  let running = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let sweeping: Promise<SweepReport> | undefined;
  let lastCallAt = 0;

  async function paced<T>(fn: () => Promise<T>): Promise<T> {
    const wait = lastCallAt + gapMs - Date.now();
    if (wait > 0) await sleep(wait);
    lastCallAt = Date.now();
    return fn();
  }

  async function sweepOnce(): Promise<SweepReport> {
    const s = await services.settings.current();
    const now = services.clock.now();
    const createdBefore = new Date(now.getTime() - s.reconcile.pending_after_minutes * 60_000).toISOString();
    const due = await services.store.transactions.listOverduePending(now.toISOString(), createdBefore, o.batchSize ?? 200);
    const report: SweepReport = { checked: 0, outcomes: {}, errors: 0 };
    for (const tx of due) {
      if (stopped) break;
      try {
        const r = await paced(() => refreshFromGateway(services, tx, 'reconcile'));
        report.outcomes[r.outcome] = (report.outcomes[r.outcome] ?? 0) + 1;
      } catch (err) {
        report.errors++;
        const kind = err instanceof GatewayError ? err.kind : 'error';
        log.warn({ order_id: tx.orderId, error: kind, err: err instanceof GatewayError ? undefined : { message: String(err) } }, 'reconcile: status check failed; tried again next sweep');
      }
      // To the back of the queue, whatever the answer: an order the gateway keeps not knowing must
      // not hold back the others.
      await services.store.transactions.markChecked(tx.id, services.clock.now().toISOString()).catch(() => undefined);
      report.checked++;
    }
    for (const n of await services.store.notifications.listUnverifiedForRecheck(50)) {
      if (stopped) break;
      try {
        if (await paced(() => recheckUnverified(services, n))) report.outcomes.rechecked = (report.outcomes.rechecked ?? 0) + 1;
      } catch {
        report.errors++;
      }
      // To the back of the queue as well: fifty whose check keeps failing must not starve newer ones.
      await services.store.notifications.markChecked(n.id, services.clock.now().toISOString()).catch(() => undefined);
    }
    if (report.checked > 0 || report.errors > 0) log.info({ reconcile: report }, 'reconcile sweep done');
    return report;
  }

  async function loop(): Promise<void> {
    let intervalS = 300;
    try {
      sweeping = sweepOnce();
      await sweeping;
    } catch (err) {
      log.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'reconcile sweep failed');
    } finally {
      sweeping = undefined;
    }
    try {
      intervalS = (await services.settings.current()).reconcile.interval_s;
    } catch {
      // database unavailable: keep the default interval
    }
    if (running) {
      timer = setTimeout(() => void loop(), Math.max(1, intervalS) * 1000);
      timer.unref();
    }
  }

  return {
    name: 'reconciler',
    start() {
      if (running) return;
      running = true;
      stopped = false;
      // The first sweep waits a little, so start-up is not a burst of gateway calls.
      timer = setTimeout(() => void loop(), 5_000);
      timer.unref();
    },
    async stop() {
      running = false;
      stopped = true;
      if (timer) clearTimeout(timer);
      await sweeping?.catch(() => undefined);
    },
    sweepOnce: async () => {
      sweeping ??= sweepOnce();
      try {
        return await sweeping;
      } finally {
        sweeping = undefined;
      }
    },
  };
}
