import { Type } from 'typebox';
import type { App } from '../../types.js';
import { TAGS } from '../../types.js';
import type { Services } from '../../../types.js';
import { configRoutes } from '../config/routes.js';
import { healthProbeRoutes } from './probes.js';
import { databaseHealth } from '../../../domain/queries/health.js';

const HealthSchema = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]),
  checks: Type.Object({
    database: Type.Object({ status: Type.String(), kind: Type.String(), latency_ms: Type.Optional(Type.Number()) }),
    gateway: Type.Object({ status: Type.String(), mode: Type.String(), base_url: Type.String() }),
  }),
  version: Type.String(),
  uptime_s: Type.Number(),
});

export async function healthConfigRoutes(app: App, services: Services): Promise<void> {
  app.get(
    '/health',
    {
      config: { auth: 'none' },
      schema: { tags: [TAGS.health], summary: 'Liveness and readiness', response: { 200: HealthSchema, 503: HealthSchema } },
    },
    async (_req, reply) => {
      const db = await databaseHealth(services);
      // Without the database the stored overrides are unknown: the environment's gateway is shown.
      const s = db.ok ? await services.runtimeConfig.current().catch(() => undefined) : undefined;
      const g = (s ?? services.runtimeConfig.defaults()).gateway;
      const gateway = { status: s ? 'configured' : 'unknown', mode: g.mode, base_url: g.api_base_url };
      const body = {
        status: db.ok ? ('ok' as const) : ('unavailable' as const),
        checks: { database: { status: db.ok ? 'ok' : 'unavailable', kind: db.kind, latency_ms: db.latencyMs }, gateway },
        version: services.version,
        uptime_s: Math.round((services.clock.now().getTime() - services.startedAt.getTime()) / 1000),
      };
      return reply.code(db.ok ? 200 : 503).send(body);
    },
  );
  await healthProbeRoutes(app, services);
  await configRoutes(app, services);
}
