/**
 * The OpenTelemetry side of tracing.ts, loaded only when tracing is on: a tracer provider with an
 * OTLP exporter (`http/protobuf` or `http/json`) behind a batch processor, the sampler the standard
 * `OTEL_TRACES_SAMPLER` variables name, and the instrumentations: the Fastify app (@fastify/otel,
 * registered on paylink's app only, so the embedded simulator's own server stays out of paylink's
 * traces), undici (the gateway client and the ERP deliveries) and, on PostgreSQL, pg.
 *
 * The tracer provider is put together here rather than by @opentelemetry/sdk-node, which loads
 * every exporter (gRPC, Zipkin, Prometheus, logs, metrics) at import: 1.5 s of start-up against
 * about 0.3 s (measured on a loaded 2-core machine).
 *
 * The app is an ES module: `pg` is patched through import-in-the-middle's loader hook, registered
 * here before it is imported and told only that name. The hook slows the loading of every module
 * after it (about 0.5–0.8 s of start-up measured), so it is registered only when the database is
 * PostgreSQL; undici and Fastify need no patching (diagnostics channels, an explicit plugin), and
 * log lines get their trace ids from the logger's own mixin (`traceLogFields`), not from a patched
 * pino. Client and database spans are made only inside a span (a request, a delivery attempt), so
 * the workers' polling makes no traces of its own.
 */
import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-node';
import { registerInstrumentations, type Instrumentation } from '@opentelemetry/instrumentation';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import type { FastifyPluginCallback } from 'fastify';
import { TracingConfigError, type SpanAttributes, type SpanOptions, type TracingBackend } from './tracing-types.js';
import { VERSION } from './version.js';
import { redactUrl } from './logging/redact.js';

const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
/** Spans still buffered at shutdown get this long to be sent; the process's own deadline is 15 s. */
const SHUTDOWN_FLUSH_MS = 5_000;

function attributesOf(a: SpanAttributes): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(a)) if (v !== undefined && v !== null) out[k] = v;
  return out;
}

/** The exporter the protocol names; only its module is loaded. */
async function exporterFor(env: Record<string, string | undefined>): Promise<SpanExporter> {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    'http/protobuf'
  ).trim() as (typeof PROTOCOLS)[number];
  if (!PROTOCOLS.includes(protocol))
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got "${protocol.slice(0, 40)}")`,
    );
  // Both read the endpoint, headers and timeout (default 10 s) from the standard variables.
  if (protocol === 'http/json')
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

/** `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG` as the specification defines them (default parentbased_always_on). */
export function samplerFor(env: Record<string, string | undefined>): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim();
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = () => {
    if (arg === undefined || arg === '') return 1;
    const r = Number(arg);
    if (!Number.isFinite(r) || r < 0 || r > 1)
      throw new TracingConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "${arg.slice(0, 40)}")`);
    return r;
  };
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio());
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio()) });
    default:
      throw new TracingConfigError(
        `OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio or their parentbased_ forms (got "${name.slice(0, 40)}")`,
      );
  }
}

/** The database is PostgreSQL (as config/env.ts decides it): its driver is instrumented. */
function usesPostgres(env: Record<string, string | undefined>): boolean {
  return Boolean(env.DATABASE_URL?.trim() || env.DATABASE_URL_FILE?.trim());
}

export async function startOpenTelemetry(env: Record<string, string | undefined>): Promise<TracingBackend> {
  const sampler = samplerFor(env);
  const exporter = await exporterFor(env);
  const fastify = new FastifyOtelInstrumentation({
    // One span per request (its hooks and handler run inside it), named by its route pattern.
    instrumentHooks: false,
    instrumentHandler: false,
    // Probes and scrapes every few seconds would bury the payments' traces.
    ignorePaths: (route) => route.url.startsWith('/health') || route.url === '/metrics',
    requestHook: (span, req) => {
      span.updateName(`${req.method} ${req.routeOptions.url ?? 'unmatched'}`);
      span.setAttribute('url.path', redactUrl(req.url));
    },
  });
  const instrumentations: Instrumentation[] = [
    fastify,
    new UndiciInstrumentation({
      requireParentforSpans: true,
      // As in the logs: a secret-looking query parameter (an ERP URL's token) is never recorded.
      requestHook: (span, request) => {
        const q = request.path.indexOf('?');
        if (q < 0) return;
        const url = redactUrl(`${request.origin}${request.path}`);
        span.setAttributes({ 'url.full': url, 'url.query': url.slice(url.indexOf('?')) });
      },
    }),
  ];
  let acknowledged: Promise<void> | undefined;
  if (usesPostgres(env)) {
    const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
    register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
    const { PgInstrumentation } = await import('@opentelemetry/instrumentation-pg');
    instrumentations.push(new PgInstrumentation({ requireParentSpan: true }));
    acknowledged = waitForAllMessagesAcknowledged();
  }
  const provider = new NodeTracerProvider({
    sampler,
    resource: defaultResource().merge(
      resourceFromAttributes({
        'service.name': env.OTEL_SERVICE_NAME?.trim() || 'paylink',
        'service.version': VERSION,
      }),
    ),
    // OTEL_BSP_* are read by the processor itself.
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // The context manager (AsyncLocalStorage) and W3C trace context propagation for outgoing calls.
  provider.register();
  registerInstrumentations({ instrumentations, tracerProvider: provider });
  await acknowledged;

  const tracer = trace.getTracer('paylink', VERSION);
  // The stored form is W3C trace context, whatever propagates on the wire.
  const w3c = new W3CTraceContextPropagator();

  return {
    inSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, options: SpanOptions): Promise<T> {
      let parent = context.active();
      if (options.parent) parent = w3c.extract(ROOT_CONTEXT, { traceparent: options.parent }, defaultTextMapGetter);
      else if (options.requireParent && trace.getSpan(parent) === undefined) return fn();
      return tracer.startActiveSpan(name, { attributes: attributesOf(attributes) }, parent, async (span) => {
        try {
          return await fn();
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
          throw err;
        } finally {
          span.end();
        }
      });
    },
    setAttributes(attributes: SpanAttributes): void {
      trace.getActiveSpan()?.setAttributes(attributesOf(attributes));
    },
    fail(description: string): void {
      trace.getActiveSpan()?.setStatus({ code: SpanStatusCode.ERROR, message: description });
    },
    logFields(): Record<string, string> {
      const sc = trace.getActiveSpan()?.spanContext();
      if (!sc) return {};
      return { trace_id: sc.traceId, span_id: sc.spanId, trace_flags: `0${sc.traceFlags.toString(16)}` };
    },
    traceparent(): string | undefined {
      if (trace.getActiveSpan() === undefined) return undefined;
      const carrier: Record<string, string> = {};
      w3c.inject(context.active(), carrier, defaultTextMapSetter);
      return carrier.traceparent;
    },
    fastifyPlugin(): FastifyPluginCallback {
      return fastify.plugin() as FastifyPluginCallback;
    },
    async shutdown(): Promise<void> {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        provider.shutdown().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
