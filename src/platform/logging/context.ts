/**
 * The request a piece of work belongs to, for loggers that are not the request's own (the gateway
 * client, shared by every request): their lines carry the same `request_id`, `order_id` and
 * `mercant_id` as the request's lines, so `/api/logs?request_id=…` shows outbound calls too.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type LogContext = Record<string, string>;

const storage = new AsyncLocalStorage<LogContext>();

/** Runs `fn` (and everything it starts) inside a request's context. */
export function runInLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run({ ...context }, fn);
}

/** Adds fields (e.g. the order once the body is parsed) to the current request's context. */
export function extendLogContext(fields: LogContext): void {
  const current = storage.getStore();
  if (current) Object.assign(current, fields);
}

/** The current request's fields, or none outside a request. */
export function currentLogContext(): LogContext {
  const current = storage.getStore();
  return current ? { ...current } : {};
}
