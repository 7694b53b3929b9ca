/**
 * Where an outbox lane delivers: each account has an ERP lane (its `erp.notify_url`, signed with
 * its ERP secret) and an alert lane (its `alerts.url`, signed with its alerts secret). Each lane
 * has its own share of the worker's lanes and its own breaker, so an alert receiver that is down
 * never holds up an ERP event, nor one account's ERP another's.
 */
import type { OutboxLane } from '../../model/delivery.js';
import type { RuntimeConfig } from '../../model/runtime-config.js';
import type { RuntimeConfigService } from '../../config/runtime.js';
import type { Store } from '../../storage/contract.js';
import { accountCount } from '../../domain/accounts/events.js';

/** How long an alert notification is retried before it is dead (a day: an alert older than that is news to nobody). */
export const ALERT_RETRY_FOR_HOURS = 24;

export interface Target {
  /** The lane's key among the worker's lanes: the account id, or `<account> alerts`. */
  key: string;
  account: string;
  lane: OutboxLane;
  url: string;
  secret: string | undefined;
  timeoutMs: number;
  retryForHours: number;
  /** Attempts per second at most (undefined = unlimited). */
  ratePerS: number | undefined;
  format: 'json' | 'slack';
  settings: RuntimeConfig;
}

/** The lanes of `account` that have somewhere to deliver. */
export function targetsOf(account: string, s: RuntimeConfig): Target[] {
  const out: Target[] = [];
  if (s.erp.notify_url)
    out.push({
      key: account,
      account,
      lane: 'erp',
      url: s.erp.notify_url,
      secret: s.erp.webhook_secret,
      timeoutMs: s.erp.timeout_ms,
      retryForHours: s.erp.retry_for_hours,
      ratePerS: s.erp.max_rate_per_s || undefined,
      format: 'json',
      settings: s,
    });
  if (s.alerts.url)
    out.push({
      key: `${account} alerts`,
      account,
      lane: 'alert',
      url: s.alerts.url,
      secret: s.alerts.secret,
      timeoutMs: s.erp.timeout_ms,
      retryForHours: ALERT_RETRY_FOR_HOURS,
      ratePerS: undefined,
      format: s.alerts.format,
      settings: s,
    });
  return out;
}

/** Every lane that can deliver now (an account's ERP or alert receiver with a URL), by key; settings read once a round. */
export async function targetsNow(store: Store, runtimeConfig: RuntimeConfigService): Promise<Map<string, Target>> {
  const own = runtimeConfig.account;
  const out = new Map<string, Target>();
  const ids = (await accountCount(store)) <= 1 ? [own] : (await store.accounts.list()).map((a) => a.id);
  for (const id of ids) {
    const s = await (id === own ? runtimeConfig : runtimeConfig.forAccount(id)).current();
    // Without an endpoint a lane's events wait (ERP events for a pull or an endpoint).
    for (const t of targetsOf(id, s)) out.set(t.key, t);
  }
  return out;
}

/** The bytes to send: the stored body, or for a Slack incoming webhook `{text}` made from an alert body. */
export function bodyFor(t: Target, payload: string): string {
  if (t.lane !== 'alert' || t.format !== 'slack') return payload;
  let a: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(payload);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) a = v as Record<string, unknown>;
  } catch {
    return JSON.stringify({ text: payload });
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const head = a.type === 'alert.resolved' ? 'RESOLVED' : 'FIRING';
  const account = str(a.account) ? ` [${str(a.account)}]` : '';
  return JSON.stringify({
    text: `${head}: ${str(a.alert)}${account}: ${str(a.summary)} (${str(a.subject)}, since ${str(a.started_at)})`,
  });
}
