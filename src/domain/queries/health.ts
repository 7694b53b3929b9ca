/** Whether the service's two dependencies answer: the database, and the gateway with our key. */
import type { Deps } from '../../types.js';
import { GatewayError } from '../../gateway/port.js';

export interface DatabaseHealth {
  ok: boolean;
  kind: 'sqlite' | 'postgres';
  /** How long the check took, ms (up to the timeout when it failed). */
  latencyMs: number;
}

/** A ping, given up after `timeoutMs` (default 2 s) so a hung database does not hang the check. */
export async function databaseHealth(services: Deps<'store'>, timeoutMs = 2_000): Promise<DatabaseHealth> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('ping timeout')), timeoutMs);
  });
  try {
    await Promise.race([services.store.ping(), timeout]);
    return { ok: true, kind: services.store.kind, latencyMs: Math.round(performance.now() - started) };
  } catch {
    return { ok: false, kind: services.store.kind, latencyMs: Math.round(performance.now() - started) };
  } finally {
    clearTimeout(timer);
  }
}

/** A status probe for an order id nobody uses: a 404 answer proves the gateway is reachable and takes our key. */
const PROBE_ID = 'paylink-console-health-probe';

export interface GatewayHealth {
  /** `reachable`, or the gateway error's kind (`refused`, `timeout`, `unavailable`, `bad_response`). */
  status: string;
  detail: string;
}

export async function gatewayHealth(services: Deps<'gateway'>): Promise<GatewayHealth> {
  const started = performance.now();
  try {
    await services.gateway.status(PROBE_ID, { timeoutMs: 2_000 });
    return { status: 'reachable', detail: `answered in ${Math.round(performance.now() - started)} ms` };
  } catch (err) {
    if (err instanceof GatewayError)
      return {
        status: err.kind,
        detail: err.kind === 'refused' ? `answered ${err.refusal?.code ?? '?'}` : 'no usable answer',
      };
    throw err;
  }
}

export type ReadinessCheck = { status: 'ok' | 'failing' | 'unknown'; detail?: string };

/**
 * Whether this instance should receive traffic: the database answers, every migration of this
 * version is applied, and it is not shutting down; the failing checks by name.
 */
export async function readiness(
  services: Deps<'store'>,
  closing: boolean,
  timeoutMs = 2_000,
): Promise<{ checks: Record<'database' | 'migrations' | 'shutting_down', ReadinessCheck>; failing: string[] }> {
  // The driver's message may name hosts or users: the log has it, the probe says only that it failed.
  const db = await databaseHealth(services, timeoutMs);
  const database: ReadinessCheck = db.ok
    ? { status: 'ok' }
    : { status: 'failing', detail: 'the database does not answer' };
  let migrations: ReadinessCheck = { status: 'unknown' };
  if (db.ok) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      const m = await Promise.race([services.store.migrationStatus(), timeout]);
      migrations =
        m.pending.length === 0
          ? { status: 'ok' }
          : { status: 'failing', detail: `not applied: ${m.pending.join(', ')} (run paylink migrate)` };
    } catch {
      migrations = { status: 'failing', detail: 'the migration table cannot be read' };
    } finally {
      clearTimeout(timer);
    }
  }
  const shutting_down: ReadinessCheck = closing
    ? { status: 'failing', detail: 'this instance is shutting down' }
    : { status: 'ok' };
  const checks = { database, migrations, shutting_down };
  return {
    checks,
    failing: Object.entries(checks)
      .filter(([, c]) => c.status === 'failing')
      .map(([name]) => name),
  };
}

/** What `/health` reports: the database, the gateway in use, and this instance. */
export interface ServiceHealth {
  database: DatabaseHealth;
  /** The gateway of the stored configuration, or the environment's (`configured` false) when the database cannot say. */
  gateway: { configured: boolean; mode: string; baseUrl: string };
  version: string;
  uptimeS: number;
}

export async function serviceHealth(
  services: Deps<'clock' | 'runtimeConfig' | 'startedAt' | 'store' | 'version'>,
): Promise<ServiceHealth> {
  const database = await databaseHealth(services);
  // Without the database the stored overrides are unknown: the environment's gateway is shown.
  const stored = database.ok ? await services.runtimeConfig.current().catch(() => undefined) : undefined;
  const g = (stored ?? services.runtimeConfig.defaults()).gateway;
  return {
    database,
    gateway: { configured: stored !== undefined, mode: g.mode, baseUrl: g.api_base_url },
    version: services.version,
    uptimeS: Math.round((services.clock.now().getTime() - services.startedAt.getTime()) / 1000),
  };
}
