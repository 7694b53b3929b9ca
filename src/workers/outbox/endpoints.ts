/**
 * What the worker knows of each delivery endpoint in this instance's memory: its circuit breaker
 * (breaker.ts decides), its pace, and for an ERP endpoint how long it has given no 2xx, which
 * raises `erp_endpoint_failing` past the account's threshold and resolves it on the next success;
 * and the alert of an ERP event that ran out of retries.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../platform/clock.js';
import type { RuntimeConfigService } from '../../config/runtime.js';
import type { Store } from '../../storage/contract.js';
import { fireAlert, resolveAlert } from '../../domain/alerts/alerts.js';
import { afterAttempt, closedBreaker, gate, pace, probing, type Breaker, type Gate } from './breaker.js';
import type { Target } from './targets.js';
import { adapt, lanesOf, startWindow, type Answer, type Window } from './window.js';
import type { OutboxEvent } from '../../model/delivery.js';

/** The endpoint as an alert names it: no query string (it may carry a token). */
export function endpointName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'the configured endpoint';
  }
}

export class EndpointWatch {
  private readonly breakers = new Map<string, Breaker>();
  /** Per endpoint: the lanes it may hold (window.ts decides). */
  private readonly windows = new Map<string, Window>();
  private readonly nextFreeAt = new Map<string, number>();
  /** Per lane: the last slot handed out, which the next one waits for. */
  private readonly paceQueue = new Map<string, Promise<void>>();
  /** ERP lanes: when this instance first saw the current run of failures (ms). */
  private readonly failingSince = new Map<string, number>();
  private readonly failingRaised = new Set<string>();

  constructor(
    private readonly deps: { store: Store; runtimeConfig: RuntimeConfigService; clock: Clock; logger: Logger },
    private readonly random: () => number,
    private readonly wake: () => void,
  ) {}

  private key(t: Target): string {
    return `${t.key} ${t.url}`;
  }

  private breakerOf(t: Target): Breaker {
    return this.breakers.get(this.key(t)) ?? closedBreaker();
  }

  private setBreaker(t: Target, b: Breaker): void {
    if (b.probeAt === undefined && b.failures === 0) this.breakers.delete(this.key(t));
    else this.breakers.set(this.key(t), b);
  }

  gate(t: Target): Gate {
    return gate(this.breakerOf(t), this.deps.clock.now().getTime());
  }

  /** Lanes the endpoint may hold now, of `max`. */
  lanes(t: Target, max: number): number {
    const w = this.windows.get(this.key(t));
    return Math.min(max, w ? lanesOf(w) : lanesOf(startWindow(max)));
  }

  /** After an attempt's answer: the endpoint's window grows or shrinks (window.ts). */
  adaptLanes(t: Target, a: Answer, max: number): void {
    const k = this.key(t);
    this.windows.set(k, adapt(this.windows.get(k) ?? startWindow(max), a, max));
  }

  startProbe(t: Target): void {
    this.setBreaker(t, probing(this.breakerOf(t)));
  }

  /**
   * Waits for the lane's next slot under its rate (at once when unlimited); true when it waited.
   * Slots are handed out first come, first served: a lane that asks late, once the loop is busy,
   * never starts before a lane still waiting for an earlier slot, so a paced backlog starts in the
   * order it was claimed.
   */
  async paced(t: Target): Promise<boolean> {
    if (!t.ratePerS) return false;
    const rate = t.ratePerS;
    let waited = false;
    const mine = (this.paceQueue.get(t.key) ?? Promise.resolve()).then(async () => {
      const now = this.deps.clock.now().getTime();
      const p = pace(this.nextFreeAt.get(t.key) ?? now, now, rate);
      this.nextFreeAt.set(t.key, p.next);
      if (p.startAt <= now) return;
      waited = true;
      await new Promise((r) => setTimeout(r, p.startAt - now));
    });
    this.paceQueue.set(t.key, mine);
    await mine;
    if (this.paceQueue.get(t.key) === mine) this.paceQueue.delete(t.key);
    return waited;
  }

  /** After an attempt: the breaker (its backlog due at once when it closes), logs, and the endpoint-failing alert. */
  async afterAttempt(t: Target, ok: boolean, probe: boolean, now: Date): Promise<void> {
    const before = this.breakerOf(t);
    const { breaker, resumed } = afterAttempt(before, { ok, probe, now: now.getTime(), random: this.random });
    const log = { account: t.account, lane: t.lane, endpoint: endpointName(t.url) };
    if (resumed) {
      // The waiting events are made due before the gate opens: a round claiming in between would
      // take the events never tried (due since they were written) ahead of those that failed
      // (due at their backoff), and the backlog would not follow in the order written.
      const moved = await this.deps.store.outbox.dueNow(t.account, now, t.lane).catch((err: unknown) => {
        this.deps.logger.error(
          { ...log, err: { message: err instanceof Error ? err.message : String(err) } },
          'waiting events could not be made due: each follows at its own retry time',
        );
        return 0;
      });
      this.setBreaker(t, breaker);
      this.deps.logger.info(
        { ...log, brought_forward: moved },
        'endpoint answers again: its waiting events follow now, in the order written',
      );
      this.wake();
    } else {
      this.setBreaker(t, breaker);
      if (before.probeAt === undefined && breaker.probeAt !== undefined)
        this.deps.logger.warn(
          { ...log, failures: breaker.failures, next_probe_at: new Date(breaker.probeAt).toISOString() },
          'endpoint failing: deliveries paused, one probe per interval until it answers',
        );
    }
    if (t.lane === 'erp') await this.watchFailing(t, ok, now);
  }

  /** `erp_delivery_dead` for an event that ran out of retries (resolved when it is retried by hand); true when raised now. */
  async raiseDead(e: OutboxEvent, error: string | null): Promise<boolean> {
    return fireAlert(this.deps, e.account, {
      alert: 'erp_delivery_dead',
      subject: e.eventId,
      summary: `An ERP event${e.orderId ? ` of order ${e.orderId}` : ''} was not delivered within its retry window; the order's later events wait behind it`,
      details: { event_id: e.eventId, order_id: e.orderId, attempts: e.attempts + 1, last_error: error },
    }).catch((err: unknown) => {
      this.deps.logger.error(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        'alert could not be raised',
      );
      return false;
    });
  }

  private async watchFailing(t: Target, ok: boolean, now: Date): Promise<void> {
    const deps = { ...this.deps };
    const subject = endpointName(t.url);
    if (ok) {
      if (!this.failingSince.delete(t.key)) return;
      this.failingRaised.delete(t.key);
      // Raised here or by another instance: the first success seen resolves it.
      if (await resolveAlert(deps, t.account, 'erp_endpoint_failing', subject)) this.wake();
      return;
    }
    const since = this.failingSince.get(t.key) ?? now.getTime();
    this.failingSince.set(t.key, since);
    const threshold = t.settings.alerts.erp_failing_after_minutes * 60_000;
    if (this.failingRaised.has(t.key) || now.getTime() - since < threshold) return;
    this.failingRaised.add(t.key);
    const raised = await fireAlert(deps, t.account, {
      alert: 'erp_endpoint_failing',
      subject,
      summary: `The ERP endpoint has answered no delivery with a 2xx for ${Math.round((now.getTime() - since) / 60_000)} min`,
      details: { endpoint: subject, failing_since: new Date(since).toISOString() },
    });
    if (raised) this.wake();
  }
}
