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
import { systemClock, type Clock } from '../platform/clock.js';
import { recheckUnverified } from '../domain/reports/ingest.js';
import { refreshFromGateway, type RefreshDeps } from '../domain/reports/refresh.js';
import { withSpan } from '../platform/tracing.js';
import { inAccount } from '../domain/accounts/scope.js';
import { GatewayError } from '../gateway/port.js';
import { Periodic } from './periodic.js';
import { fireAlert, resolveAlert } from '../domain/alerts/alerts.js';
import type { TransactionRecord } from '../model/payment.js';

/** What a sweep uses: the runtime config, and what asking the gateway and recording its answer need. */
export type ReconcilerDeps = RefreshDeps & Deps<'gateways' | 'runtimeConfig'>;

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
/** Between sweeps when `reconcile.interval_s` cannot be read. */
const DEFAULT_INTERVAL_MS = 300_000;

export interface Reconciler extends BackgroundWorker {
  /** One sweep; a call while a sweep runs shares it. */
  sweepOnce(): Promise<SweepReport>;
}

/**
 * Started, it sweeps every `reconcile.interval_s` (read after each sweep), the first time after
 * 5 s. Times come from the injected clocks only: `services.clock` for what is due, `wallClock` for
 * pacing the gateway calls.
 */
class Sweeper implements Reconciler {
  readonly name = 'reconciler';
  private readonly log: Logger;
  private readonly gapMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly wallClock: Clock;
  private readonly periodic: Periodic;
  /** Set by `stop`: a running sweep ends after its current gateway call. */
  private stopped = false;
  private sweeping: Promise<SweepReport> | undefined;
  private lastCallAt = 0;
  /** Per account: since when status calls got no answer (this instance's view). */
  private readonly gatewayFailingSince = new Map<string, number>();

  constructor(
    private readonly services: ReconcilerDeps,
    private readonly o: ReconcilerOptions = {},
  ) {
    this.log = services.logger.child({ component: 'reconciler' });
    this.gapMs = 1000 / (o.ratePerSecond ?? 5);
    this.sleep = o.sleep ?? realSleep;
    this.wallClock = o.wallClock ?? systemClock;
    this.periodic = new Periodic({
      name: this.name,
      logger: this.log,
      clock: services.clock,
      // The first sweep waits a little, so start-up is not a burst of gateway calls.
      firstDelayMs: 5_000,
      tick: async (now) => {
        await this.shared(now);
        return false;
      },
      nextDelayMs: async () => Math.max(1, (await services.runtimeConfig.current()).reconcile.interval_s) * 1000,
      fallbackDelayMs: DEFAULT_INTERVAL_MS,
      failureMessage: 'reconcile sweep failed',
    });
  }

  start(): void {
    if (this.periodic.running) return;
    this.stopped = false;
    this.periodic.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.periodic.stop();
    await this.sweeping?.catch(() => undefined);
  }

  sweepOnce(): Promise<SweepReport> {
    return this.shared(this.services.clock.now());
  }

  private async shared(now: Date): Promise<SweepReport> {
    this.sweeping ??= this.sweep(now);
    try {
      return await this.sweeping;
    } finally {
      this.sweeping = undefined;
    }
  }

  private async sweep(now: Date): Promise<SweepReport> {
    const report: SweepReport = { checked: 0, outcomes: {}, errors: 0 };
    await this.refreshOverdue(now, report);
    await this.recheckUnverified(report);
    if (report.checked > 0 || report.errors > 0) this.log.info({ reconcile: report }, 'reconcile sweep done');
    return report;
  }

  /** Pending transactions past their expiry, or without news for `reconcile.pending_after_minutes`. */
  private async refreshOverdue(now: Date, report: SweepReport): Promise<void> {
    const { services } = this;
    const s = await services.runtimeConfig.current();
    const createdBefore = new Date(now.getTime() - s.reconcile.pending_after_minutes * 60_000).toISOString();
    const due = await services.store.transactions.listOverduePending(
      now.toISOString(),
      createdBefore,
      this.o.batchSize ?? 200,
    );
    for (const tx of due) {
      if (this.stopped) break;
      try {
        // One trace per payment checked: its status call, its writes and its ERP event's deliveries.
        const r = await this.paced(() =>
          withSpan(
            'reconcile status check',
            {
              'paylink.account': tx.account,
              'paylink.order_id': tx.orderId,
              'paylink.gateway_order_id': tx.gatewayOrderId,
            },
            () => refreshFromGateway(inAccount(services, tx.account), tx, 'reconcile'),
          ),
        );
        report.outcomes[r.outcome] = (report.outcomes[r.outcome] ?? 0) + 1;
        await this.gatewayAnswered(tx.account);
        await this.watchStuck(tx, now);
      } catch (err) {
        report.errors++;
        const kind = err instanceof GatewayError ? err.kind : 'error';
        if (err instanceof GatewayError && (kind === 'unavailable' || kind === 'timeout'))
          await this.gatewayFailed(tx.account, now);
        this.log.warn(
          {
            order_id: tx.orderId,
            error: kind,
            err: err instanceof GatewayError ? undefined : { message: String(err) },
          },
          'reconcile: status check failed; tried again next sweep',
        );
      }
      // To the back of the queue, whatever the answer: an order the gateway keeps not knowing must
      // not hold back the others.
      await services.store.transactions.markChecked(tx.id, services.clock.now().toISOString()).catch(() => undefined);
      report.checked++;
    }
  }

  /**
   * `payment_stuck_pending`: still pending `alerts.stuck_pending_after_minutes` past its expiry
   * after the status check just made; resolved once a check finds it settled.
   */
  private async watchStuck(tx: TransactionRecord, now: Date): Promise<void> {
    const { services } = this;
    const after = await services.store.forAccount(tx.account).transactions.findById(tx.id);
    if (!after) return;
    if (after.status !== 'pending') {
      await resolveAlert(services, tx.account, 'payment_stuck_pending', tx.orderId).catch(() => false);
      return;
    }
    const expiry = after.expireAt ? Date.parse(after.expireAt) : Number.NaN;
    const s = await services.runtimeConfig.forAccount(tx.account).current();
    if (Number.isNaN(expiry) || now.getTime() < expiry + s.alerts.stuck_pending_after_minutes * 60_000) return;
    await fireAlert(services, tx.account, {
      alert: 'payment_stuck_pending',
      subject: tx.orderId,
      summary: `Order ${tx.orderId} is still pending past its expiry, and the gateway's status check did not settle it`,
      details: { order_id: tx.orderId, gateway_order_id: after.gatewayOrderId, expire_at: after.expireAt },
    }).catch((err: unknown) => this.log.warn({ err: { message: String(err) } }, 'alert could not be raised'));
  }

  /** `gateway_unreachable`: status calls failing (no answer) for `alerts.erp_failing_after_minutes`; resolved by the next answer. */
  private async gatewayFailed(account: string, now: Date): Promise<void> {
    const since = this.gatewayFailingSince.get(account) ?? now.getTime();
    this.gatewayFailingSince.set(account, since);
    const s = await this.services.runtimeConfig.forAccount(account).current();
    if (now.getTime() - since < s.alerts.erp_failing_after_minutes * 60_000) return;
    await fireAlert(this.services, account, {
      alert: 'gateway_unreachable',
      subject: s.gateway.api_base_url,
      summary: `The gateway's status API has given no answer for ${Math.round((now.getTime() - since) / 60_000)} min`,
      details: { api_base_url: s.gateway.api_base_url, failing_since: new Date(since).toISOString() },
    }).catch((err: unknown) => this.log.warn({ err: { message: String(err) } }, 'alert could not be raised'));
  }

  private async gatewayAnswered(account: string): Promise<void> {
    if (!this.gatewayFailingSince.delete(account)) return;
    const s = await this.services.runtimeConfig.forAccount(account).current();
    await resolveAlert(this.services, account, 'gateway_unreachable', s.gateway.api_base_url).catch(() => false);
  }

  private async recheckUnverified(report: SweepReport): Promise<void> {
    const { services } = this;
    for (const n of await services.store.notifications.listUnverifiedForRecheck(RECHECKS_PER_SWEEP)) {
      if (this.stopped) break;
      try {
        const recheck = () =>
          withSpan(
            'reconcile notification recheck',
            { 'paylink.account': n.account, 'paylink.gateway_order_id': n.gatewayOrderId },
            () => recheckUnverified(inAccount(services, n.account), n),
          );
        if (await this.paced(recheck)) report.outcomes.rechecked = (report.outcomes.rechecked ?? 0) + 1;
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
  return new Sweeper(services, o);
}
