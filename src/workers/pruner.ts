/**
 * Retention: deletes what is older than `retention.days` (runtime config) — delivered ERP events
 * with their attempts, processed gateway notifications — and expired idempotency records. Small
 * batches, each its own short transaction, with a pause between them: ingest never waits long for
 * the database (on SQLite a batch joins the group commit like any request). Transactions are kept.
 */
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { RuntimeConfigService } from '../config/runtime.js';
import type { Store } from '../storage/contract.js';
import type { BackgroundWorker } from '../types.js';
import { Periodic } from './periodic.js';

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
const SESSION_KEEP_MS = 12 * 3_600_000 + DAY_MS;

export interface PrunerDeps {
  store: Store;
  runtimeConfig: RuntimeConfigService;
  clock: Clock;
  logger: Logger;
}

/** Started, it runs every `intervalMs`, the first time after at most a minute: start-up and the first requests come first. */
class RetentionPruner implements Pruner {
  readonly name = 'retention';
  private readonly batch: number;
  private readonly maxBatches: number;
  private readonly pauseMs: number;
  private readonly periodic: Periodic;

  constructor(
    private readonly deps: PrunerDeps,
    o: PrunerOptions,
  ) {
    this.batch = o.batchSize ?? 500;
    this.maxBatches = o.maxBatches ?? 200;
    this.pauseMs = o.pauseMs ?? 20;
    const intervalMs = o.intervalMs ?? 600_000;
    this.periodic = new Periodic({
      name: this.name,
      logger: deps.logger,
      clock: deps.clock,
      firstDelayMs: Math.min(intervalMs, 60_000),
      // Stopping ends a running run after its current batch.
      tick: async (now) => {
        await this.prune(now, () => this.periodic.running);
        return false;
      },
      nextDelayMs: () => intervalMs,
      fallbackDelayMs: intervalMs,
      failureMessage: 'retention run failed; retried at the next interval',
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  runOnce(): Promise<PruneReport> {
    return this.prune(this.deps.clock.now(), () => true);
  }

  private async prune(now: Date, going: () => boolean): Promise<PruneReport> {
    const { store, runtimeConfig, logger } = this.deps;
    const s = await runtimeConfig.current();
    const before = new Date(now.getTime() - s.retention.days * DAY_MS).toISOString();
    const batch = this.batch;
    const report: PruneReport = {
      events: await this.drain(going, () => store.transaction((tx) => tx.retention.pruneDelivered(before, batch))),
      notifications: await this.drain(going, () =>
        store.transaction((tx) => tx.retention.pruneNotifications(before, batch)),
      ),
      idempotency: await this.drain(going, () =>
        store.transaction((tx) => tx.retention.pruneIdempotency(now.toISOString(), batch)),
      ),
    };
    if (report.events + report.notifications + report.idempotency > 0)
      logger.info({ ...report, older_than: before }, 'retention: old records deleted');
    // Console sessions ended or idle past their 12 hours are of no use a day later (their audit
    // lines stay in the log); few rows, one statement.
    const sessions = await store.operators.pruneSessions(new Date(now.getTime() - SESSION_KEEP_MS).toISOString());
    if (sessions > 0) logger.info({ sessions }, 'retention: ended console sessions deleted');
    return report;
  }

  /** Batch after batch of `step` until one comes back short, `maxBatches`, or `going` turns false. */
  private async drain(going: () => boolean, step: () => Promise<number>): Promise<number> {
    let total = 0;
    for (let i = 0; i < this.maxBatches && going(); i++) {
      const n = await step();
      total += n;
      if (n < this.batch) break;
      await new Promise((r) => setTimeout(r, this.pauseMs));
    }
    return total;
  }
}

export function createPruner(deps: PrunerDeps, o: PrunerOptions = {}): Pruner {
  return new RetentionPruner(deps, o);
}
