/**
 * How every background worker runs: `start` schedules the first tick; a tick does the worker's
 * work at the injected clock's time and then reads how long to wait for the next one; `wake` runs
 * a tick now, or right after the running one; `stop` cancels the timer and resolves once the
 * running tick has finished. A tick that fails is logged and the next one is scheduled all the
 * same. Timers are unref'd: a worker never keeps the process alive on its own.
 */
import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'pino';
import type { Clock } from '../platform/clock.js';
import type { BackgroundWorker } from '../types.js';

export interface PeriodicSpec {
  readonly name: string;
  readonly logger: Logger;
  /** The time each tick is given. */
  readonly clock: Clock;
  /** From `start` to the first tick, ms. */
  readonly firstDelayMs: number;
  /** One tick's work at `now`; resolves true when more work is waiting, so the next tick runs at once. */
  tick(now: Date): Promise<boolean>;
  /** Until the next tick, ms; read after every tick, whether it succeeded or failed. */
  nextDelayMs(): number | Promise<number>;
  /** The wait when `nextDelayMs` fails (the database holding the setting may be the reason the tick failed). */
  readonly fallbackDelayMs: number;
  /** Logged (warn) with the error's message when a tick fails. */
  readonly failureMessage: string;
}

export class Periodic implements BackgroundWorker {
  readonly name: string;
  private active = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<number> | undefined;
  /** Set by a wake-up that arrives while a tick runs: the next tick follows at once. */
  private again = false;
  /** The async context of `start`, which every tick runs in. */
  private scope: AsyncResource | undefined;

  constructor(private readonly spec: PeriodicSpec) {
    this.name = spec.name;
  }

  /** Between `start` and `stop`. */
  get running(): boolean {
    return this.active;
  }

  start(): void {
    if (this.active) return;
    this.active = true;
    this.scope = new AsyncResource('paylink.periodic');
    this.schedule(this.spec.firstDelayMs);
  }

  /** Runs a tick now, or right after the running one. Cheap; does nothing while stopped. */
  wake(): void {
    if (!this.active) return;
    if (this.ticking) this.again = true;
    else this.schedule(0);
  }

  async stop(): Promise<void> {
    this.active = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  private schedule(ms: number): void {
    if (!this.active) return;
    clearTimeout(this.timer);
    // Ticks run in the context the worker was started in, never in that of the request that woke
    // it: a request's log fields and trace must not stick to this and every later round.
    this.scope ??= new AsyncResource('paylink.periodic');
    const scope = this.scope;
    this.timer = setTimeout(() => scope.runInAsyncScope(() => void this.run()), ms);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick();
    const delay = await this.ticking;
    this.ticking = undefined;
    // A wake-up that came while the delay was being read still runs the next tick at once.
    this.schedule(this.again ? 0 : delay);
  }

  /** The tick and the delay after it; never rejects. */
  private async tick(): Promise<number> {
    this.again = false;
    let more = false;
    try {
      more = await this.spec.tick(this.spec.clock.now());
    } catch (err) {
      this.spec.logger.warn(
        { err: { message: err instanceof Error ? err.message : String(err) } },
        this.spec.failureMessage,
      );
    }
    if (more || this.again || !this.active) return 0;
    try {
      return await this.spec.nextDelayMs();
    } catch {
      return this.spec.fallbackDelayMs;
    }
  }
}
