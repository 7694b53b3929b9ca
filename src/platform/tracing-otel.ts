/**
 * The OpenTelemetry side of tracing.ts, loaded only when tracing is on: the Node SDK with an OTLP
 * exporter (`http/protobuf` or `http/json`), the sampler and limits the standard `OTEL_*`
 * variables name, and the instrumentations: the Fastify app (@fastify/otel, registered on
 * paylink's app only, so the embedded simulator's own server stays out of paylink's traces),
 * undici (the gateway client and the ERP deliveries), pg, and pino (every log line written inside a
 * span carries `trace_id` and `span_id`).
 *
 * The app is an ES module: `pg` and `pino` are patched through import-in-the-middle's loader hook,
 * registered here before they are imported, and told only those module names, so no other module
 * is wrapped. undici and Fastify need no patching (diagnostics channels, an explicit plugin).
 * Client and database spans are made only inside a span (a request, a delivery attempt), so the
 * workers' polling makes no traces of its own.
 */
import { register } from 'node:module';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { NodeSDK, core, resources } from '@opentelemetry/sdk-node';
import {
  ROOT_CONTEXT,
  SpanStatusCode,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
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

function exporterFor(env: Record<string, string | undefined>) {
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
  return protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtoExporter();
}

export async function startOpenTelemetry(env: Record<string, string | undefined>): Promise<TracingBackend> {
  const traceExporter = exporterFor(env);
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const fastify = new FastifyOtelInstrumentation({
    // One span per request (its hooks and handler run inside it), named by its route pattern.
    instrumentHooks: false,
    instrumentHandler: false,
    requestHook: (span, req) => {
      span.updateName(`${req.method} ${req.routeOptions.url ?? 'unmatched'}`);
      span.setAttribute('url.path', redactUrl(req.url));
    },
  });
  const sdk = new NodeSDK({
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'paylink',
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.version': VERSION })),
    traceExporter,
    // Traces only: paylink's metrics are Prometheus's (/metrics), its logs are its files.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
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
      new PgInstrumentation({ requireParentSpan: true }),
      new PinoInstrumentation({ disableLogSending: true }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();

  const tracer = trace.getTracer('paylink', VERSION);
  // The stored form is W3C trace context whatever OTEL_PROPAGATORS says, so a stored event stays
  // readable after the propagators change.
  const w3c = new core.W3CTraceContextPropagator();

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
        sdk.shutdown().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
