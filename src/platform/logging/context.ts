/**
 * The request a piece of work belongs to, for loggers that are not the request's own (the gateway
 * client, shared by every request; the audit log): their lines carry the same `request_id`,
 * `order_id` and `mercant_id` as the request's lines, so `/api/logs?request_id=…` shows outbound
 * calls and audit lines too.
 *
 * The context is handed on explicitly (a request's services carry it, a gateway is bound to it),
 * not kept in an AsyncLocalStorage: an active AsyncLocalStorage turns on promise hooks for the
 * whole process on Node 20, about 0.15 µs more on every awaited promise. Work outside a request
 * (the workers) carries none, and its lines have none of these fields.
 */
export type LogContext = Record<string, string>;

/** A request's context: one object per request, extended in place as the order becomes known. */
export function newLogContext(requestId: string): LogContext {
  return { request_id: requestId };
}
