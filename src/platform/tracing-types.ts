/** What tracing.ts and its OpenTelemetry side (tracing-otel.ts) share. */
import type { FastifyPluginCallback } from 'fastify';

export type SpanAttributes = Record<string, string | number | boolean | null | undefined>;

export interface SpanOptions {
  /** A stored W3C `traceparent`: the span joins that trace as a child of the span it names. */
  parent?: string | null;
  /** Only trace when a span is already active (the work is part of a traced request or job). */
  requireParent?: boolean;
}

/** What the OpenTelemetry side provides once started. */
export interface TracingBackend {
  inSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>, options: SpanOptions): Promise<T>;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the current span as failed with a short, secret-free description. */
  fail(description: string): void;
  traceparent(): string | undefined;
  /** `trace_id`, `span_id` and `trace_flags` of the current span for a log line; none outside a span. */
  logFields(): Record<string, string>;
  fastifyPlugin(): FastifyPluginCallback;
  shutdown(): Promise<void>;
}

/** A setting that makes tracing impossible as configured (the process refuses to start). */
export class TracingConfigError extends Error {}
