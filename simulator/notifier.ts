import { Agent, request } from 'undici';
import type { FastifyBaseLogger } from 'fastify';
import type { Json } from './lib/validate.js';
import { notificationPayload, statusCodeOf } from './payloads.js';
import type { MerchantSettings, NotifyTargets, Txn } from './state.js';

/** Retry gaps after each failed attempt, in minutes: the gateway's documented schedule for a notification it could not deliver. */
export const RETRY_INTERVALS_MIN = [2, 10, 30, 90, 210] as const;
const MAX_REDIRECTS = 5;

export interface Attempt {
  n: number;
  at: string;
  url: string;
  status?: number;
  error?: string;
  redirects?: string[];
  duration_ms: number;
}

export type Outcome = 'pending' | 'retrying' | 'delivered' | 'failed' | 'dropped' | 'held' | 'no_url' | 'stopped';

export interface NotificationRecord {
  id: number;
  /** The merchant whose transaction it reports (its MID is in the payload too). */
  merchant_id: string;
  url: string | null;
  order_id: string;
  transaction_id: string;
  transaction_status: string;
  status_code: string;
  duplicate: boolean;
  created_at: string;
  outcome: Outcome;
  max_retries?: number;
  next_attempt_at?: string;
  attempts: Attempt[];
  payload: Json;
}

export interface NotificationFaults {
  drop_rate: number;
  duplicate_rate: number;
  reorder: boolean;
}

export interface NotifierDeps {
  /** The simulator-wide notification URL, for merchants without one of their own. */
  notificationUrl(): string | undefined;
  timeScale(): number;
  random(): number;
  faults(): NotificationFaults;
  timeoutMs: number;
  logger?: FastifyBaseLogger;
}

/**
 * How many retries the gateway grants for a receiver's answer: 500 → 1, 503 → 4, 400/404 → 2,
 * 301/302/303 → none, anything else (other codes, timeouts, refused connections) → 5.
 */
export function retriesFor(status: number | undefined): number {
  if (status === undefined) return 5;
  if (status >= 200 && status < 300) return 0;
  if (status === 500) return 1;
  if (status === 503) return 4;
  if (status === 400 || status === 404) return 2;
  if (status === 301 || status === 302 || status === 303) return 0;
  return 5;
}

export function notificationUrls(t: NotifyTargets, dashboardUrl: string | undefined): string[] {
  if (t.override && t.override.length > 0) return t.override;
  const base = dashboardUrl ? [dashboardUrl] : [];
  return [...base, ...(t.append ?? []).filter((u) => !base.includes(u))];
}

interface PostResult {
  status?: number;
  error?: string;
  redirects: string[];
}

export class Notifier {
  readonly records: NotificationRecord[] = [];
  private nextId = 1;
  private held = new Map<string, NotificationRecord[]>();
  private timers = new Set<NodeJS.Timeout>();
  private chains = new Map<string, Promise<void>>();
  private agent: Agent;
  private stopped = false;

  /** Called first for each notification; one answering true has reported it its own way (BI-SNAP transactions). */
  readonly interceptors: Array<(t: Txn) => boolean> = [];

  constructor(private readonly deps: NotifierDeps) {
    this.agent = new Agent({ connect: { timeout: deps.timeoutMs }, keepAliveTimeout: 1000 });
  }

  /** Signed with the merchant's server key, sent where the transaction's creation asked, else to the merchant's URL. */
  notify(t: Txn, merchant: MerchantSettings): void {
    if (this.interceptors.some((intercept) => intercept(t))) return;
    const urls = notificationUrls(t.notify, merchant.notificationUrl ?? this.deps.notificationUrl());
    const payload = notificationPayload(t, merchant.serverKey);
    if (urls.length === 0) {
      this.push(this.makeRecord(t, payload, null, false, 'no_url'));
      return;
    }
    const faults = this.deps.faults();
    const drop = this.deps.random() < faults.drop_rate;
    const dup = !drop && this.deps.random() < faults.duplicate_rate;
    const fresh: NotificationRecord[] = [];
    for (const url of urls) {
      fresh.push(this.push(this.makeRecord(t, payload, url, false, drop ? 'dropped' : 'pending')));
      if (dup) fresh.push(this.push(this.makeRecord(t, payload, url, true, 'pending')));
    }
    if (drop) return;
    if (faults.reorder) this.hold(t, fresh);
    else fresh.forEach((r) => this.start(r));
  }

  /** Reorder fault: a transaction's notifications wait until a non-pending one arrives, then go newest first. */
  private hold(t: Txn, fresh: NotificationRecord[]): void {
    fresh.forEach((r) => (r.outcome = 'held'));
    const list = [...(this.held.get(t.transaction_id) ?? []), ...fresh];
    if (t.status === 'pending') {
      this.held.set(t.transaction_id, list);
      return;
    }
    this.held.delete(t.transaction_id);
    list.reverse().forEach((r) => this.start(r));
  }

  flushHeld(): void {
    const all = [...this.held.values()];
    this.held.clear();
    for (const list of all) list.reverse().forEach((r) => this.start(r));
  }

  private makeRecord(
    t: Txn,
    payload: Json,
    url: string | null,
    duplicate: boolean,
    outcome: Outcome,
  ): NotificationRecord {
    return {
      id: 0,
      merchant_id: t.merchant_id,
      url,
      order_id: t.order_id,
      transaction_id: t.transaction_id,
      transaction_status: t.status,
      status_code: statusCodeOf(t, 'notification'),
      duplicate,
      created_at: new Date().toISOString(),
      outcome,
      attempts: [],
      payload,
    };
  }

  private push(r: NotificationRecord): NotificationRecord {
    r.id = this.nextId++;
    this.records.push(r);
    return r;
  }

  /** First attempts go out one after another per transaction and URL, so a quiet receiver sees them in order. */
  private start(r: NotificationRecord): void {
    r.outcome = 'pending';
    const key = `${r.transaction_id}|${r.url ?? ''}`;
    const prev = this.chains.get(key) ?? Promise.resolve();
    const next = prev.then(() => this.attempt(r));
    this.chains.set(key, next);
    void next.finally(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }

  private async attempt(r: NotificationRecord): Promise<void> {
    if (this.stopped || r.url === null) return;
    const startedAt = Date.now();
    const res = await this.post(r.url, JSON.stringify(r.payload));
    const attempt: Attempt = {
      n: r.attempts.length + 1,
      at: new Date(startedAt).toISOString(),
      url: r.url,
      duration_ms: Date.now() - startedAt,
    };
    if (res.status !== undefined) attempt.status = res.status;
    if (res.error !== undefined) attempt.error = res.error;
    if (res.redirects.length > 0) attempt.redirects = res.redirects;
    r.attempts.push(attempt);
    this.afterAttempt(r, res.status);
  }

  private afterAttempt(r: NotificationRecord, status: number | undefined): void {
    const ok = status !== undefined && status >= 200 && status < 300;
    r.max_retries = retriesFor(status);
    const retriesDone = r.attempts.length - 1;
    if (ok) r.outcome = 'delivered';
    else if (this.stopped) r.outcome = 'stopped';
    else if (retriesDone < r.max_retries) this.scheduleRetry(r, retriesDone);
    else r.outcome = 'failed';
    this.deps.logger?.debug({ notification: r.id, outcome: r.outcome, status }, 'notification attempt');
  }

  private scheduleRetry(r: NotificationRecord, index: number): void {
    const minutes = RETRY_INTERVALS_MIN[Math.min(index, RETRY_INTERVALS_MIN.length - 1)] ?? 210;
    // The gateway adds random jitter to each gap; we keep it within the upper half of the gap.
    const delay = minutes * 60_000 * this.deps.timeScale() * (0.5 + 0.5 * this.deps.random());
    r.outcome = 'retrying';
    r.next_attempt_at = new Date(Date.now() + delay).toISOString();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      delete r.next_attempt_at;
      void this.attempt(r);
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private async post(url: string, body: string): Promise<PostResult> {
    const redirects: string[] = [];
    let target = url;
    try {
      for (;;) {
        const res = await request(target, {
          method: 'POST',
          body,
          dispatcher: this.agent,
          headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'Veritrans' },
          signal: AbortSignal.timeout(this.deps.timeoutMs),
        });
        await res.body.dump();
        const location = res.headers.location;
        // 307/308 are followed with the same POST; 301/302/303 are deliberately not followed.
        if ((res.statusCode === 307 || res.statusCode === 308) && typeof location === 'string') {
          if (redirects.length >= MAX_REDIRECTS) return { error: 'too many redirects', redirects };
          target = new URL(location, target).toString();
          redirects.push(target);
          continue;
        }
        return { status: res.statusCode, redirects };
      }
    } catch (err) {
      return { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err), redirects };
    }
  }

  clear(): void {
    this.records.length = 0;
    this.held.clear();
    this.clearTimers();
  }

  private clearTimers(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    this.held.clear();
    await this.agent.destroy().catch(() => undefined);
  }
}
