/**
 * The daily reconciliation from the gateway's transaction history: once the Jakarta clock passes
 * the configured time of day (default 03:00), every enabled account with BI-SNAP credentials has
 * the previous day reconciled, unless it already is (by this instance, another one, or an operator).
 * It looks every 15 minutes, so a day missed while the service was down is made up at the next
 * look; an account whose run failed is tried again an hour later, not at every look (a refusing
 * gateway is not asked 96 times a day). Several instances may run it at once: a day is written once.
 */
import type { Logger } from 'pino';
import type { BackgroundWorker } from '../types.js';
import { Periodic } from './periodic.js';
import { inAccount } from '../domain/accounts/scope.js';
import { DEFAULT_ACCOUNT } from '../model/account.js';
import { jakartaWallClock } from '../platform/time.js';
import {
  historyDone,
  previousJakartaDay,
  reconcileHistoryDay,
  type HistoryDeps,
} from '../domain/reconciliation/history.js';

export interface HistoryReconcilerOptions {
  /** Jakarta time of day, `HH:MM`. Default 03:00. */
  at?: string;
  /** Between looks, ms. Default 15 minutes. */
  intervalMs?: number;
  /** After a failed run, before the same account and day are tried again, ms. Default 1 hour. */
  retryAfterMs?: number;
}

export interface HistoryRunReport {
  day: string | null;
  reconciled: string[];
  failed: string[];
}

export interface HistoryReconciler extends BackgroundWorker {
  /** One look at `now`: reconciles what is due; what it did. */
  runOnce(now?: Date): Promise<HistoryRunReport>;
}

class DailyHistory implements HistoryReconciler {
  readonly name = 'history-reconciler';
  private readonly log: Logger;
  private readonly at: string;
  private readonly retryAfterMs: number;
  private readonly periodic: Periodic;
  /** `${account}|${day}` → when its last run failed (this instance's view). */
  private readonly failedAt = new Map<string, number>();

  constructor(
    private readonly services: HistoryDeps,
    o: HistoryReconcilerOptions,
  ) {
    this.log = services.logger.child({ component: 'history-reconciler' });
    this.at = o.at ?? '03:00';
    this.retryAfterMs = o.retryAfterMs ?? 3_600_000;
    const intervalMs = o.intervalMs ?? 900_000;
    this.periodic = new Periodic({
      name: this.name,
      logger: this.log,
      clock: services.clock,
      firstDelayMs: Math.min(intervalMs, 60_000),
      tick: async (now) => {
        await this.runOnce(now);
        return false;
      },
      nextDelayMs: () => intervalMs,
      fallbackDelayMs: intervalMs,
      failureMessage: 'history reconciliation look failed; tried again at the next one',
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  async runOnce(now: Date = this.services.clock.now()): Promise<HistoryRunReport> {
    const report: HistoryRunReport = { day: null, reconciled: [], failed: [] };
    if (jakartaWallClock(now).slice(11, 16) < this.at) return report;
    const day = previousJakartaDay(now);
    report.day = day;
    const accounts = await this.services.store.accounts.list();
    const ids = [DEFAULT_ACCOUNT, ...accounts.filter((a) => a.disabledAt === null).map((a) => a.id)];
    for (const account of [...new Set(ids)]) {
      const s = inAccount(this.services, account);
      if (!(await s.histories.for(account).configured())) continue;
      if (await historyDone(s, day)) continue;
      const key = `${account}|${day}`;
      const failed = this.failedAt.get(key);
      if (failed !== undefined && now.getTime() - failed < this.retryAfterMs) continue;
      try {
        const out = await reconcileHistoryDay(s, { day, by: 'schedule' });
        this.failedAt.delete(key);
        report.reconciled.push(account);
        this.log.info(
          { account, day, reconciliation_import: out.import.id, rows: out.import.rows, matched: out.import.matched },
          'history reconciliation: day reconciled',
        );
      } catch (err) {
        this.failedAt.set(key, now.getTime());
        report.failed.push(account);
        this.log.warn(
          { account, day, err: { message: err instanceof Error ? err.message : String(err) } },
          'history reconciliation: the day could not be reconciled; nothing written, tried again later',
        );
      }
    }
    return report;
  }
}

export function createHistoryReconciler(services: HistoryDeps, o: HistoryReconcilerOptions = {}): HistoryReconciler {
  return new DailyHistory(services, o);
}
