import { Type } from 'typebox';
import type { App } from '../types.js';
import { TAGS } from '../types.js';
import type { Services } from '../../types.js';
import { configRoutes } from './config.js';

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
      const started = performance.now();
      let dbOk = true;
      try {
        await Promise.race([services.store.ping(), new Promise((_, rej) => setTimeout(() => rej(new Error('ping timeout')), 2_000).unref())]);
      } catch {
        dbOk = false;
      }
      const latency = Math.round(performance.now() - started);
      // Without the database the stored overrides are unknown: the environment's gateway is shown.
      const s = dbOk ? await services.settings.current().catch(() => undefined) : undefined;
      const g = (s ?? services.settings.defaults()).gateway;
      const gateway = { status: s ? 'configured' : 'unknown', mode: g.mode, base_url: g.api_base_url };
      const body = {
        status: dbOk ? ('ok' as const) : ('unavailable' as const),
        checks: { database: { status: dbOk ? 'ok' : 'unavailable', kind: services.store.kind, latency_ms: latency }, gateway },
        version: services.version,
        uptime_s: Math.round((services.clock.now().getTime() - services.startedAt.getTime()) / 1000),
      };
      return reply.code(dbOk ? 200 : 503).send(body);
    },
  );
  await configRoutes(app, services);
}
