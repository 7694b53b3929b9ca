/** `/metrics`: the Prometheus exposition, for the operators' scraper. */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { NoQuery } from '../../schemas/common.js';

export const metricsRoutes: RoutePlugin<Deps<'metrics' | 'outbox'>> = async (app, services) => {
  app.get(
    '/metrics',
    {
      config: { auth: 'op', metricsToken: true },
      schema: {
        tags: [TAGS.operations],
        summary: 'Prometheus metrics (text exposition format)',
        description:
          'Prometheus text format: HTTP requests and latency per route, gateway calls per operation and outcome, notifications per source and result, outbox states, the age of the oldest undelivered ERP event and delivery latency. With `METRICS_TOKEN` set, a scraper may present `Authorization: Bearer <METRICS_TOKEN>` instead of the operator credentials.',
        querystring: NoQuery,
        response: {
          200: Type.Unsafe<string>({
            description: 'Prometheus text format 0.0.4',
            content: { 'text/plain': { schema: { type: 'string' } } },
          }),
        },
      },
    },
    async (req, reply) => {
      try {
        await services.outbox.refreshDepth();
      } catch (err) {
        // Metrics must still be served when the database is down; the gauge keeps its last value.
        req.log.warn(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          'outbox depth not refreshed',
        );
      }
      const text = await services.metrics.registry.metrics();
      return reply.type(services.metrics.registry.contentType).send(text);
    },
  );
};
