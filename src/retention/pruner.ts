/**
 * Retention: deletes what is older than `retention.days` (runtime config) — delivered ERP events
 * with their attempts, processed gateway notifications — and expired idempotency records. Small
 * batches, each its own short transaction, with a pause between them: ingest never waits long for
 * the database (on SQLite a batch joins the group commit like any request). Transactions are kept.
 */
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Settings } from '../settings.js';
import type { Store } from '../storage/store.js';
import type { BackgroundWorker } from '../types.js';

export interface PrunerOptions {
  /** Between runs, ms. Default 10 minutes. */
  intervalMs?: number;
  /** Rows per batch. Default 500. */
  batchSize?: number;
  /** Batches per kind and run (the rest waits for the next run). Default 200. */
  maxBatches?: number;
  /** Pause between batches, ms. Default 20. */
  pauseMs?: number;
}

export interface PruneReport {
  events: number;
  notifications: number;
  idempotency: number;
}

export interface Pruner extends BackgroundWorker {
  /** One run: every kind, batch after batch, until nothing old is left or the run's cap. */
  runOnce(): Promise<PruneReport>;
}

const DAY_MS = 86_400_000;

export function createPruner(deps: { store: Store; settings: Settings; clock: Clock; logger: Logger }, o: PrunerOptions = {}): Pruner {
  const batch = o.batchSize ?? 500;
  const maxBatches = o.maxBatches ?? 200;
  const pause = o.pauseMs ?? 20;
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<unknown> | undefined;

  async function drain(step: () => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxBatches && running; i++) {
      const n = await step();
      total += n;
      if (n < batch) break;
      await new Promise((r) => setTimeout(r, pause));
    }
    return total;
  }

  async function runOnce(): Promise<PruneReport> {
    const s = await deps.settings.current();
    const now = deps.clock.now();
    const before = new Date(now.getTime() - s.retention.days * DAY_MS).toISOString();
    const { store } = deps;
    const report: PruneReport = {
      events: await drain(() => store.transaction((tx) => tx.retention.pruneDelivered(before, batch))),
      notifications: await drain(() => store.transaction((tx) => tx.retention.pruneNotifications(before, batch))),
      idempotency: await drain(() => store.transaction((tx) => tx.retention.pruneIdempotency(now.toISOString(), batch))),
    };
    if (report.events + report.notifications + report.idempotency > 0) deps.logger.info({ ...report, older_than: before }, 'retention: old records deleted');
    return report;
  }

  function schedule(ms: number): void {
    if (!running) return;
    timer = setTimeout(() => {
      current = runOnce()
        .catch((err: unknown) => deps.logger.warn({ err: { message: err instanceof Error ? err.message : String(err) } }, 'retention run failed; retried at the next interval'))
        .finally(() => {
          current = undefined;
          schedule(o.intervalMs ?? 600_000);
        });
    }, ms);
    timer.unref();
  }

  return {
    name: 'retention',
    start() {
      if (running) return;
      running = true;
      // Not at once: start-up and the first requests come first.
      schedule(Math.min(o.intervalMs ?? 600_000, 60_000));
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await current;
    },
    async runOnce() {
      const wasRunning = running;
      running = true;
      try {
        return await runOnce();
      } finally {
        running = wasRunning;
      }
    },
  };
}
