import type { FastifyInstance } from 'fastify';
import { problem } from '../../platform/errors.js';
import { PROBE_PATHS } from '../api/health/routes.js';

/**
 * While the app closes, Node closes idle connections only: a request that still arrives on a busy
 * keep-alive connection is answered 503 problem+json (SHUTTING_DOWN) with its request id and
 * `Connection: close`, before any other work, so the client retries it on another instance or later.
 * (Fastify's own `return503OnClosing` answer is bare JSON without a request id.) The liveness and
 * readiness probes still answer: readiness then names `shutting_down` as its failing check.
 *
 * After each answer while closing, the connections that became idle are closed: the ones busy when
 * closing began are not closed by Node, and a keep-alive client (the gateway after a notification)
 * would hold each open until the server's keep-alive timeout (72 s) or the forced exit, and the
 * close would wait for it. A connection with a further request queued is not idle: it is answered.
 */
export function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (req, reply) => {
    if (!closing || PROBE_PATHS.has(req.routeOptions.url ?? '')) return;
    req.log.info('request refused: shutting down');
    // Serialized here: the route's response schemas (a /health 503 is its own body) do not apply.
    const body = JSON.stringify(problem('SHUTTING_DOWN', req.id));
    return reply.code(503).header('connection', 'close').type('application/problem+json').send(body);
  });
  app.addHook('onResponse', async () => {
    if (closing) setImmediate(() => app.server.closeIdleConnections());
  });
}
