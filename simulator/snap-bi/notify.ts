/**
 * BI-SNAP notifications: RSA-signed with the simulator's key over `POST:path:sha256(body):timestamp`,
 * posted to the merchant's notification base URL + the product's relative path, and retried on
 * the gateway's documented schedule (2, 10, 30, 90, 210 min, scaled by the time scale) until a 200.
 */
import { randomInt } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { Agent, request } from 'undici';
import { sha256Hex, signRsa } from './crypto.js';
import { wib } from './wire.js';

const RETRY_MIN = [2, 10, 30, 90, 210] as const;

export interface SnapNotificationRecord {
  id: number;
  url: string | null;
  path: string;
  order_id: string;
  latest_transaction_status: string;
  headers: Record<string, string>;
  /** The exact bytes sent (and signed). */
  body: string;
  attempts: { at: string; status?: number; error?: string }[];
  outcome: 'pending' | 'retrying' | 'delivered' | 'failed' | 'no_url' | 'stopped';
}

export interface SnapNotifierDeps {
  key: () => KeyObject;
  baseUrl: () => string | undefined;
  partnerId: () => string;
  timeScale: () => number;
  timeoutMs: number;
}

export class SnapNotifier {
  readonly records: SnapNotificationRecord[] = [];
  private nextId = 1;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly agent: Agent;
  private stopped = false;

  constructor(private readonly deps: SnapNotifierDeps) {
    this.agent = new Agent({ connect: { timeout: deps.timeoutMs }, keepAliveTimeout: 1000 });
  }

  send(path: string, orderId: string, status: string, payload: Record<string, unknown>): SnapNotificationRecord {
    const body = JSON.stringify(payload);
    const timestamp = wib(new Date());
    const headers = {
      'content-type': 'application/json',
      'x-timestamp': timestamp,
      'x-signature': signRsa(`POST:${path}:${sha256Hex(body)}:${timestamp}`, this.deps.key()),
      'x-partner-id': this.deps.partnerId(),
      'x-external-id': String(Date.now()) + String(randomInt(100_000, 999_999)),
      'channel-id': '95221',
    };
    const base = this.deps.baseUrl();
    const r: SnapNotificationRecord = {
      id: this.nextId++,
      url: base === undefined ? null : `${base}${path}`,
      path,
      order_id: orderId,
      latest_transaction_status: status,
      headers,
      body,
      attempts: [],
      outcome: base === undefined ? 'no_url' : 'pending',
    };
    this.records.push(r);
    if (r.url !== null) void this.attempt(r);
    return r;
  }

  private async attempt(r: SnapNotificationRecord): Promise<void> {
    if (this.stopped || r.url === null) return;
    const at = new Date().toISOString();
    let status: number | undefined;
    try {
      const res = await request(r.url, {
        method: 'POST',
        body: r.body,
        headers: r.headers,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.deps.timeoutMs),
      });
      await res.body.dump();
      status = res.statusCode;
      r.attempts.push({ at, status });
    } catch (err) {
      r.attempts.push({ at, error: err instanceof Error ? err.message : String(err) });
    }
    // "Midtrans will treat any other responses except HTTP status code 200 as an error."
    if (status === 200) r.outcome = 'delivered';
    else if (this.stopped) r.outcome = 'stopped';
    else if (r.attempts.length > RETRY_MIN.length) r.outcome = 'failed';
    else this.retry(r);
  }

  private retry(r: SnapNotificationRecord): void {
    const minutes = RETRY_MIN[r.attempts.length - 1] ?? 210;
    r.outcome = 'retrying';
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        void this.attempt(r);
      },
      minutes * 60_000 * this.deps.timeScale(),
    );
    timer.unref();
    this.timers.add(timer);
  }

  clear(): void {
    this.records.length = 0;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clear();
    await this.agent.destroy().catch(() => undefined);
  }
}
