/** `/metrics`: the Prometheus exposition, for the operators' scraper. */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import type { Deps } from '../../../types.js';
import { NoQuery } from '../../schemas/common.js';
import { refreshPaymentGauges } from '../../../domain/queries/scrape-gauges.js';

export const metricsRoutes: RoutePlugin<Deps<'clock' | 'metrics' | 'outbox' | 'store'>> = async (app, services) => {
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
        await refreshPaymentGauges(services);
      } catch (err) {
        // Metrics must still be served when the database is down; the gauges keep their last values.
        req.log.warn(
          { err: { message: err instanceof Error ? err.message : String(err) } },
          'database gauges not refreshed',
        );
      }
      const text = await services.metrics.registry.metrics();
      return reply.type(services.metrics.registry.contentType).send(text);
    },
  );
};
