/**
 * `/health` for monitors, and the probes for orchestrators: liveness (the process answers; a
 * restart would help only when it does not) and readiness (send traffic here: the database
 * answers, every migration of this version is applied, the instance is not shutting down). A 503
 * names each failing check, so an operator sees why an instance was taken out of rotation.
 * `/health` keeps its own shape for existing monitors.
 */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import { withExample } from '../../schemas/examples.js';
import { VERSION } from '../../../platform/version.js';
import type { Deps } from '../../../types.js';
import { readiness, serviceHealth, type ServiceHealth } from '../../../domain/queries/health.js';

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: Type.Object({ status: Type.String(), kind: Type.String(), latency_ms: Type.Optional(Type.Number()) }),
    gateway: Type.Object({ status: Type.String(), mode: Type.String(), base_url: Type.String() }),
  }),
  version: Type.String(),
  uptime_s: Type.Number(),
});

const CheckSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('unknown')]),
  detail: Type.Optional(Type.String()),
});
const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({ database: CheckSchema, migrations: CheckSchema, shutting_down: CheckSchema }),
  /** The checks that failed, by name. */
  failing: Type.Array(Type.String()),
});
const LiveSchema = Type.Object({ status: Type.Literal('live') });

/** The probes' paths: answered while the app closes too (see shutting-down.ts), so readiness can say so. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/health/live', '/health/ready']);

function healthView(h: ServiceHealth) {
  const { database: db, gateway: g } = h;
  return {
    status: db.ok ? ('ok' as const) : ('unavailable' as const),
    checks: {
      database: { status: db.ok ? 'ok' : 'unavailable', kind: db.kind, latency_ms: db.latencyMs },
      gateway: { status: g.configured ? 'configured' : 'unknown', mode: g.mode, base_url: g.baseUrl },
    },
    version: h.version,
    uptime_s: h.uptimeS,
  };
}

export const healthRoutes: RoutePlugin<Deps<'clock' | 'runtimeConfig' | 'startedAt' | 'store' | 'version'>> = async (
  app,
  services,
) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.get(
    '/health',
    {
      config: { auth: 'none' },
      schema: {
        tags: [TAGS.health],
        summary: 'Liveness and readiness',
        description:
          'Public. 200 while the database answers (with its latency) and the configured gateway; 503 when the database is unreachable, so a load balancer takes the instance out.',
        response: {
          200: withExample(HealthSchema, {
            status: 'ok',
            checks: {
              database: { status: 'ok', kind: 'postgres', latency_ms: 2 },
              gateway: { status: 'configured', mode: 'sandbox', base_url: 'https://api.sandbox.midtrans.com' },
            },
            version: VERSION,
            uptime_s: 3600,
          }),
          503: HealthSchema,
        },
      },
    },
    async (_req, reply) => {
      const health = await serviceHealth(services);
      return reply.code(health.database.ok ? 200 : 503).send(healthView(health));
    },
  );

  app.get(
    '/health/live',
    {
      config: { auth: 'none' },
      schema: {
        tags: [TAGS.health],
        summary: 'Liveness',
        description: '200 while the process answers.',
        response: { 200: withExample(LiveSchema, { status: 'live' }) },
      },
    },
    async () => ({ status: 'live' as const }),
  );

  app.get(
    '/health/ready',
    {
      config: { auth: 'none' },
      schema: {
        tags: [TAGS.health],
        summary: 'Readiness',
        description:
          '200 when this instance should receive traffic: the database answers, every migration of this version is applied and it is not shutting down. 503 otherwise, naming the failing checks.',
        response: {
          200: withExample(ReadySchema, {
            status: 'ready',
            checks: { database: { status: 'ok' }, migrations: { status: 'ok' }, shutting_down: { status: 'ok' } },
            failing: [],
          }),
          503: ReadySchema,
        },
      },
    },
    async (_req, reply) => {
      const { checks, failing } = await readiness(services, closing);
      return reply
        .code(failing.length === 0 ? 200 : 503)
        .send({ status: failing.length === 0 ? ('ready' as const) : ('unavailable' as const), checks, failing });
    },
  );
};
