import { randomUUID } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyHttpOptions,
  type FastifyPluginOptions,
  type RouteOptions,
} from 'fastify';
import type { Server } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps, Services } from './types.js';
import type { App, Mount, RoutePlugin } from './http/types.js';
import { authHook } from './http/plugins/auth.js';
import { errorHandler, notFoundHandler, routingErrorHandler } from './http/plugins/errors.js';
import { homeRoutes } from './http/api/home/routes.js';
import { healthRoutes } from './http/api/health/routes.js';
import { configRoutes } from './http/api/config/routes.js';
import { paymentLinkRoutes } from './http/api/payment-links/routes.js';
import { paymentRoutes } from './http/api/payments/routes.js';
import { paymentActionRoutes } from './http/api/payments/actions.js';
import { webhookRoutes } from './http/api/webhook/routes.js';
import { snapBiWebhookRoutes } from './http/api/webhook/snap-bi.js';
import { testEventRoutes } from './http/api/erp-events/test-event.js';
import { deliveryRoutes } from './http/api/deliveries/routes.js';
import { logRoutes } from './http/api/log-files/routes.js';
import { referenceRoutes } from './http/reference/routes.js';
import { devRoutes } from './http/api/dev/routes.js';
import { transactionRoutes } from './http/api/transactions/routes.js';
import { metricsRoutes } from './http/api/metrics/routes.js';
import { erpEventRoutes } from './http/api/erp-events/routes.js';
import { reconciliationRoutes } from './http/api/reconciliation/routes.js';
import { reportRoutes } from './http/api/reports/routes.js';
import { operatorRoutes } from './http/api/operators/routes.js';
import { signInRoutes } from './http/console/sign-in.js';
import { consoleOperatorRoutes } from './http/console/operators-page.js';
import { accountRoutes } from './http/api/accounts/routes.js';
import { consoleScope } from './http/console/scope.js';
import { consolePages } from './http/console/pages.js';
import { consoleDownloadRoutes } from './http/console/downloads.js';
import { consoleActionRoutes } from './http/console/actions.js';
import { consoleConfigRoutes } from './http/console/config-routes.js';
import { consoleReconciliationRoutes } from './http/console/reconciliation-page.js';
import { registerOpenApi } from './http/openapi.js';
import { lazySchemaController, trackSchemas } from './http/lazy-compilers.js';
import { clientErrorHandler } from './http/plugins/client-error.js';
import { registerJsonParser } from './http/plugins/json-body.js';
import { refuseNul } from './http/plugins/nul-guard.js';
import { refuseWhileClosing } from './http/plugins/shutting-down.js';
import { createMethodTable } from './http/plugins/allowed-methods.js';
import { bindLogContext } from './platform/logging/logger.js';
import { deriveMercantId } from './domain/orders/ids.js';
import { runInLogContext } from './platform/logging/context.js';
import { tracingFastifyPlugin } from './platform/tracing.js';

export interface AppOptions {
  /** Largest request body, bytes. Default 256 KiB. */
  bodyLimit?: number;
  /** Called for every route as it is registered (tests enumerate protected routes with it). */
  onRoute?: (route: RouteOptions) => void;
  /** How long a request may take to arrive in full before it is answered 408, ms. Default 120 s. */
  requestTimeout?: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const text = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, 200) : undefined);

/**
 * The order a request is about, from its path or body. A gateway notification names the gateway's
 * order id, which is logged as such (the original id is only known once the record is found).
 */
function orderContext(params: unknown, body: unknown, fromGateway: boolean): Record<string, string> | undefined {
  const p = typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : {};
  const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  if (fromGateway) {
    const gatewayOrderId = text(b.order_id);
    return gatewayOrderId ? { gateway_order_id: gatewayOrderId } : undefined;
  }
  // A path may name the gateway's id instead of the original: mercant_id is derived from a body's only.
  const bodyOrderId = text(b.order_id);
  const orderId = text(p.order_id) ?? bodyOrderId;
  const mercantId = text(b.mercant_id) ?? (bodyOrderId === undefined ? undefined : deriveMercantId(bodyOrderId));
  if (orderId === undefined && mercantId === undefined) return undefined;
  return {
    ...(orderId === undefined ? {} : { order_id: orderId }),
    ...(mercantId === undefined ? {} : { mercant_id: mercantId }),
  };
}

/** A hop count trusts that many proxies in front of the service, whatever their addresses. */
function trustProxyOption(
  v: string[] | number | undefined,
): string[] | boolean | ((address: string, hop: number) => boolean) {
  if (v === undefined) return false;
  return typeof v === 'number' ? (_address, hop) => hop < v : v;
}

/** The server's options: logging, request ids, proxies, limits and the answers of its own errors. */
function serverOptions(services: Deps<'config' | 'logger'>, opts: AppOptions) {
  const requestTimeout = opts.requestTimeout ?? 120_000;
  return {
    loggerInstance: services.logger as FastifyBaseLogger,
    bodyLimit: opts.bodyLimit ?? 256 * 1024,
    // One line per request, written when it completes (onResponse below), instead of Fastify's two:
    // a log line costs about as much as a database statement on the webhook's path.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Only the configured proxies' X-Forwarded-For is believed; req.ip is then the client's address.
    trustProxy: trustProxyOption(services.config.trustProxy),
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    requestTimeout,
    // Node looks for requests over their time at this interval (its default, 30 s, for the default
    // timeout), and enforces the request timeout only when the headers' own (60 s) is not longer.
    http: {
      headersTimeout: Math.min(60_000, requestTimeout),
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(requestTimeout / 4)),
    },
    // Requests during shutdown get problem+json instead (refuseWhileClosing).
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 512 },
    // verbose: each complaint carries its schema, so a refusal can name what the field accepts.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true, verbose: true } },
    frameworkErrors: routingErrorHandler,
    clientErrorHandler: clientErrorHandler(services.logger as FastifyBaseLogger),
  } satisfies FastifyHttpOptions<Server>;
}

/** A route plugin with the options it is registered with. */
function mount<Options extends FastifyPluginOptions>(plugin: RoutePlugin<Options>, options: Options): Mount {
  return async (app) => {
    await app.register(plugin, options);
  };
}

/**
 * Every route of the app, one plugin per resource, each given the services it names; the order is
 * the order of the OpenAPI document. The Dev/Test plugins register nothing without LOG_EXPOSE_API.
 * The console's pages share its scope (form bodies, CSRF, its headers and error pages).
 */
function routeTable(services: Services): Mount[] {
  return [
    mount(homeRoutes, {}),
    mount(healthRoutes, services),
    mount(configRoutes, services),
    mount(paymentLinkRoutes, services),
    mount(paymentRoutes, services),
    mount(paymentActionRoutes, services),
    mount(webhookRoutes, services),
    mount(snapBiWebhookRoutes, services),
    mount(testEventRoutes, services),
    mount(deliveryRoutes, services),
    mount(logRoutes, services),
    mount(referenceRoutes, {}),
    mount(devRoutes, services),
    mount(transactionRoutes, services),
    mount(metricsRoutes, services),
    mount(erpEventRoutes, services),
    mount(reconciliationRoutes, services),
    mount(reportRoutes, services),
    mount(operatorRoutes, services),
    mount(signInRoutes, services),
    mount(accountRoutes, services),
    consoleScope(services, [
      mount(consolePages, services),
      mount(consoleDownloadRoutes, services),
      mount(consoleActionRoutes, services),
      mount(consoleConfigRoutes, services),
      mount(consoleReconciliationRoutes, services),
      mount(consoleOperatorRoutes, services),
    ]),
  ];
}

/** Builds the HTTP app over already-created services. Listening is the caller's business. */
export async function buildApp(services: Services, opts: AppOptions = {}): Promise<App> {
  const schemas = lazySchemaController();
  const app = Fastify({
    ...serverOptions(services, opts),
    schemaController: schemas.option,
  }).withTypeProvider<TypeBoxTypeProvider>();
  trackSchemas(app, schemas);
  // Tracing (when on) wraps every route, so it is registered before any.
  const tracing = tracingFastifyPlugin();
  if (tracing) await app.register(tracing);

  const methods = createMethodTable();
  // Every body is JSON; routes that take raw bytes add their own parser in their scope.
  app.removeContentTypeParser('text/plain');
  registerJsonParser(app);
  // First hook: everything the request does from here on runs inside its log context.
  app.addHook('onRequest', (req, _reply, done) => {
    runInLogContext({ request_id: req.id }, done);
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  // Every answer is about one caller's orders, configuration or logs (errors included): no
  // browser, proxy or CDN may keep a copy. A route that serves something shared (a static
  // script) states its own Cache-Control.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    return payload;
  });
  refuseWhileClosing(app);
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === undefined) {
      throw new Error(`route ${route.method} ${route.url} declares no auth (config.auth)`);
    }
    methods.add(route.method, route.url);
    opts.onRoute?.(route);
  });
  app.addHook('onRequest', authHook(services));
  app.addHook('preValidation', refuseNul);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler(methods));
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ req, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    // Route patterns, not raw URLs, so label cardinality stays bounded.
    const route = req.routeOptions.url ?? 'unmatched';
    services.metrics.httpRequests.inc({ route, method: req.method, status: String(reply.statusCode) });
    services.metrics.httpDuration.observe({ route, method: req.method }, reply.elapsedTime / 1000);
  });
  app.addHook('preHandler', async (req, reply) => {
    // Every later line of a request about an order carries it, so /api/logs?order_id=… finds them.
    const ctx = orderContext(req.params, req.body, req.routeOptions.config.auth === 'sig');
    if (ctx) bindLogContext(req, reply, ctx);
  });
  // Before the route groups: @fastify/swagger collects routes as they are added.
  await registerOpenApi(app, services);

  for (const routes of routeTable(services)) await routes(app);
  return app;
}
