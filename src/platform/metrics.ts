import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every Prometheus metric the service exposes, on one registry per service instance (so tests that
 * build several apps in one process do not collide). Served by `GET /metrics`.
 */
export function createMetrics() {
  const registry = new Registry();
  // The default metrics are named process_… and nodejs_…: the prefix adds only the service's name.
  collectDefaultMetrics({ register: registry, prefix: 'paylink_' });
  const metrics = {
    registry,
    httpRequests: new Counter({
      name: 'paylink_http_requests_total',
      help: 'HTTP requests answered, by route pattern, method and status code',
      labelNames: ['route', 'method', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'paylink_http_request_duration_seconds',
      help: 'HTTP request duration by route pattern',
      labelNames: ['route', 'method'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    gatewayDuration: new Histogram({
      name: 'paylink_gateway_call_duration_seconds',
      help: 'Gateway call latency by operation and outcome (HTTP status, timeout or unavailable)',
      labelNames: ['operation', 'outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    notifications: new Counter({
      name: 'paylink_notifications_total',
      help: 'Gateway notifications and status reports processed, by source and result (and account, other than default)',
      // `account` is bounded by the accounts table: a notification URL of no account answers 404 uncounted.
      labelNames: ['source', 'result', 'account'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'paylink_erp_deliveries_total',
      help: 'ERP delivery attempts by outcome (delivered, failed, dead, rejected_stale_lease) and account, other than default',
      labelNames: ['outcome', 'account'] as const,
      registers: [registry],
    }),
    deliveryDuration: new Histogram({
      name: 'paylink_erp_delivery_duration_seconds',
      help: 'ERP delivery attempt latency',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    outboxDepth: new Gauge({
      name: 'paylink_outbox_depth',
      help: 'ERP events not yet delivered, by state (pending, failed, dead); refreshed when /metrics is read',
      labelNames: ['state'] as const,
      registers: [registry],
    }),
    paymentsPendingPastExpiry: new Gauge({
      name: 'paylink_payments_pending_past_expiry',
      help: 'Payments still pending (or challenged) after their expiry time, which the status sweeper should have settled with the gateway; refreshed when /metrics is read',
      registers: [registry],
    }),
    outboxOldestPending: new Gauge({
      name: 'paylink_outbox_oldest_pending_seconds',
      help: 'Age of the oldest ERP event not yet delivered (pending or failed), per account (labelled other than default), 0 when none; refreshed when /metrics is read',
      labelNames: ['account'] as const,
      registers: [registry],
    }),
  };
  // Every outcome is exported from the start at 0: `increase()` over a series that first appears
  // already at 1 sees no increase, so the first dead event would not alert.
  for (const outcome of ['delivered', 'failed', 'dead', 'rejected_stale_lease'] as const)
    metrics.deliveries.inc({ outcome }, 0);
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;
