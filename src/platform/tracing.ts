/**
 * Tracing (OpenTelemetry), behind the few calls the rest of paylink makes: a span around a piece of
 * work, attributes on the current span, the current trace context as a W3C `traceparent` to keep
 * with an ERP event, and the Fastify plugin for the HTTP app.
 *
 * Off unless `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set. Off,
 * every call here is a plain function call that does nothing, and no OpenTelemetry module is
 * loaded — not even `@opentelemetry/api`, whose no-op tracer would do the same job: importing it
 * alone costs 18–32 ms of start-up and about 1 MB of heap (measured with Node 20 on a 2-core
 * machine), and a global registration, in a service that mostly runs without a collector, while
 * this module's own no-op is free. On, `startTracing` loads `tracing-otel.ts` (the tracer
 * provider, one exporter and the instrumentations: 0.25–0.55 s measured the same way) before the
 * HTTP framework and the database driver are imported.
 */
import type { FastifyPluginCallback } from 'fastify';

import type { SpanAttributes, SpanOptions, TracingBackend } from './tracing-types.js';

export { TracingConfigError, type SpanAttributes, type SpanOptions } from './tracing-types.js';

let backend: TracingBackend | undefined;

/** The environment names that turn tracing on. */
export const TRACING_ENDPOINT_VARIABLES = [
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
] as const;

export function tracingWanted(env: Record<string, string | undefined>): boolean {
  return TRACING_ENDPOINT_VARIABLES.some((name) => (env[name] ?? '').trim() !== '');
}

/**
 * Starts tracing when `env` asks for it; resolves with whether it is on. Runs before the HTTP
 * framework and `pg` are imported and before the logger is made (the command does it first), so
 * the instrumentations can wrap them. The exporters read `process.env` themselves: a `.env` file
 * is already in it when the command line read one.
 */
export async function startTracing(env: Record<string, string | undefined> = process.env): Promise<boolean> {
  if (backend) return true;
  if (!tracingWanted(env)) return false;
  const { startOpenTelemetry } = await import('./tracing-otel.js');
  backend = await startOpenTelemetry(env);
  return true;
}

export function tracingOn(): boolean {
  return backend !== undefined;
}

/**
 * Runs `fn` inside a span named `name` (off: runs `fn`). The span ends when `fn` settles; a throw
 * marks it failed and is thrown on.
 */
export function withSpan<T>(
  name: string,
  attributes: SpanAttributes,
  fn: () => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  return backend ? backend.inSpan(name, attributes, fn, options) : fn();
}

/** Sets attributes on the current span (none outside a span, or when off). */
export function setSpanAttributes(attributes: SpanAttributes): void {
  backend?.setAttributes(attributes);
}

/** Marks the current span failed (an attempt that got no 2xx, say). */
export function failSpan(description: string): void {
  backend?.fail(description);
}

/**
 * The current trace context as a W3C `traceparent`, to be stored with work done later (an ERP
 * event's deliveries); undefined when off or outside a span.
 */
export function currentTraceparent(): string | undefined {
  return backend?.traceparent();
}

/**
 * A pino mixin adding the current span's `trace_id` and `span_id` to each line; undefined when off,
 * so a logger made without tracing pays nothing per line.
 */
export function traceLogMixin(): (() => Record<string, string>) | undefined {
  const b = backend;
  return b ? () => b.logFields() : undefined;
}

/** The Fastify instrumentation to register first on the app; undefined when off. */
export function tracingFastifyPlugin(): FastifyPluginCallback | undefined {
  return backend?.fastifyPlugin();
}

/** Sends the spans still buffered and stops; nothing when off. */
export async function stopTracing(): Promise<void> {
  const b = backend;
  backend = undefined;
  await b?.shutdown();
}
