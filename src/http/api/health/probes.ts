/**
 * Probes for orchestrators: liveness (the process answers; a restart would help only when it does
 * not) and readiness (send traffic here: the database answers, every migration of this version is
 * applied, the instance is not shutting down). A 503 names each failing check, so an operator sees
 * why an instance was taken out of rotation. `/health` keeps its own shape for existing monitors.
 */
import { Type } from 'typebox';
import type { App } from '../../types.js';
import { TAGS } from '../../types.js';
import type { Services } from '../../../types.js';
import { readiness } from '../../../domain/queries/health.js';

const CheckSchema = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('failing'), Type.Literal('unknown')]), detail: Type.Optional(Type.String()) });
const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unavailable')]),
  checks: Type.Object({ database: CheckSchema, migrations: CheckSchema, shutting_down: CheckSchema }),
  /** The checks that failed, by name. */
  failing: Type.Array(Type.String()),
});
const LiveSchema = Type.Object({ status: Type.Literal('live') });

/** The probes' paths: answered while the app closes too (see shutting-down.ts), so readiness can say so. */
export const PROBE_PATHS: ReadonlySet<string> = new Set(['/health/live', '/health/ready']);

export async function healthProbeRoutes(app: App, services: Services): Promise<void> {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.get(
    '/health/live',
    { config: { auth: 'none' }, schema: { tags: [TAGS.health], summary: 'Liveness', description: '200 while the process answers.', response: { 200: LiveSchema } } },
    async () => ({ status: 'live' as const }),
  );

  app.get(
    '/health/ready',
    {
      config: { auth: 'none' },
      schema: {
        tags: [TAGS.health],
        summary: 'Readiness',
        description: '200 when this instance should receive traffic: the database answers, every migration of this version is applied and it is not shutting down. 503 otherwise, naming the failing checks.',
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_req, reply) => {
      const { checks, failing } = await readiness(services, closing);
      return reply.code(failing.length === 0 ? 200 : 503).send({ status: failing.length === 0 ? ('ready' as const) : ('unavailable' as const), checks, failing });
    },
  );
}
