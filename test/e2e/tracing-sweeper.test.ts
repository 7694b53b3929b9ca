/**
 * A payment whose notification was lost and that the status sweeper finds paid is one trace too:
 * the sweep's check of it, its status call and the delivery of the ERP event it wrote. In-process
 * (this test file's own process), tracing started as `paylink serve` starts it, exporting http/json
 * to a receiver on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { startOtlpReceiver, tree } from '../helpers/otlp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { createReconciler } from '../../src/workers/status-sweeper.js';
import { startTracing, stopTracing } from '../../src/platform/tracing.js';

const SECRET = 'raw-erp-secret-for-tracing-0123456789';

describe('tracing: the status sweeper', () => {
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let erp: ErpReceiver;
  let e: E2EContext;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    // The exporter reads the standard variables from the process's environment, as in the service.
    Object.assign(process.env, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    expect(await startTracing(process.env)).toBe(true);
    erp = await startErpReceiver({ secret: SECRET });
    e = await startE2E('sqlite', { listen: true, serviceOptions: { runtimeConfigCacheMs: 0 } });
    await patchRuntimeConfig(e.services.runtimeConfig, {
      erp: { notify_url: erp.url, webhook_secret: SECRET, timeout_ms: 2_000 },
    });
    e.services.outbox.start();
  });
  afterAll(async () => {
    await e?.close();
    await erp?.close();
    await stopTracing();
    await otlp?.close();
    for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_BSP_SCHEDULE_DELAY'])
      delete process.env[k];
  });

  it('a lost settlement found by the sweeper: its check, status call and ERP delivery are one trace', async () => {
    await e.sim.put('/_sim/faults', { drop_rate: 1 });
    const created = await e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      payload: { order_id: 'SWEPT-1', nominal: 150000 },
    });
    expect(created.statusCode).toBe(201);
    const link = created.json<{ gateway_order_id: string }>();
    await e.sim.post(`/_sim/transactions/${link.gateway_order_id}/pay`, { payment_type: 'bank_transfer' });
    await patchRuntimeConfig(e.services.runtimeConfig, { reconcile: { interval_s: 300, pending_after_minutes: 0 } });
    await new Promise((r) => setTimeout(r, 5));
    expect((await createReconciler(e.services, { ratePerSecond: 1000 }).sweepOnce()).outcomes).toMatchObject({
      applied: 1,
    });
    await erp.waitFor((r) => r.accepted().length >= 1);
    const spans = otlp.spans;
    await expect.poll(() => spans.some((s) => s.name === 'ERP delivery attempt'), { timeout: 10_000 }).toBe(true);

    const check = spans.find((s) => s.name === 'reconcile status check');
    expect(check?.attributes).toMatchObject({
      'paylink.account': 'default',
      'paylink.order_id': 'SWEPT-1',
      'paylink.report_result': 'applied',
    });
    // The report it applied names the link's purchase (the link's gateway id and a suffix).
    expect(String(check?.attributes['paylink.gateway_order_id'])).toMatch(
      new RegExp(`^${link.gateway_order_id}-\\d+$`),
    );
    // A root: the sweep round itself is in no trace.
    expect(check?.parentSpanId ?? '').toBe('');
    const trace = spans.filter((s) => s.traceId === check?.traceId);
    console.log(`trace ${check?.traceId}\n${tree(trace)}`);
    const children = trace.filter((s) => s.parentSpanId === check?.spanId);
    expect(children.some((s) => s.kind === 3 && String(s.attributes['url.full']).includes('/status'))).toBe(true);
    const attempt = trace.find((s) => s.name === 'ERP delivery attempt');
    expect(attempt?.attributes).toMatchObject({ 'paylink.order_id': 'SWEPT-1', 'paylink.outcome': 'delivered' });
  });
});
