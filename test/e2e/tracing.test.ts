/**
 * Tracing as a real process (`src/cli.ts serve`, what `paylink serve` runs) exporting OTLP/HTTP
 * (http/json) to a receiver on loopback: one paid notification is one trace holding the webhook
 * request, the gateway status call and every delivery attempt of its ERP event (the ERP refuses the
 * first). Without an endpoint, no OpenTelemetry module is loaded at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { DATABASE_KINDS, TEST_DATABASE_URL, tempDir } from '../helpers/stores.js';
import { startServiceProcess, stopServiceProcess, type ServiceProcess } from '../helpers/child.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { startOtlpReceiver, tree, type Span } from '../helpers/otlp-receiver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RECORDER = path.join(ROOT, 'test/fixtures/module-recorder/register.mjs');
const CLI_SERVE = ['--import', 'tsx', '--import', RECORDER, 'src/cli.ts', 'serve'];
const OPERATOR_AUTH = { authorization: `Basic ${Buffer.from('ops:tracing-test-operator-pass').toString('base64')}` };
const ERP_URL_TOKEN = 'erp-url-token-0123456789';
const SECRET = `whsec_${Buffer.from('tracing-test-erp-secret-0123').toString('base64')}`;

function loadedModules(file: string): string[] {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

describe('tracing (OpenTelemetry)', () => {
  let child: ServiceProcess | undefined;
  let erp: ErpReceiver | undefined;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>> | undefined;
  let dir = '';
  let cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    if (child) await stopServiceProcess(child, 'SIGKILL');
    child = undefined;
    for (const c of cleanups) await c();
    cleanups = [];
    await erp?.close();
    erp = undefined;
    await otlp?.close();
    otlp = undefined;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const baseEnv = (d: string) => ({
    DATA_DIR: d,
    LOG_DIR: path.join(d, 'logs'),
    MIDTRANS_MODE: 'simulator',
    log_user: 'ops',
    log_pass: 'tracing-test-operator-pass',
    PAYLINK_TEST_MODULE_LOG: path.join(d, 'modules.txt'),
  });

  /** SQLite in DATA_DIR, or a PostgreSQL database of its own (dropped after the test). */
  async function databaseEnv(kind: 'sqlite' | 'postgres'): Promise<Record<string, string>> {
    if (kind === 'sqlite') return {};
    const base = new URL(TEST_DATABASE_URL ?? '');
    const name = `paylink_trace_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: base.href });
    await admin.connect();
    await admin.query(`create database ${name}`);
    cleanups.push(async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    });
    return { DATABASE_URL: Object.assign(new URL(base.href), { pathname: `/${name}` }).href };
  }

  it.each(DATABASE_KINDS)(
    '%s: one paid notification is one trace: the webhook request, the status call and both delivery attempts',
    async (kind) => {
      dir = tempDir('paylink-tracing-');
      const database = await databaseEnv(kind);
      otlp = await startOtlpReceiver();
      // The ERP's URL carries a token in its query: spans record it redacted, as the logs do.
      erp = await startErpReceiver({ secret: SECRET, path: `/erp/events?token=${ERP_URL_TOKEN}` });
      // The first attempt is refused (retried after 1 s), the second accepted.
      erp.setScript((_d, i) => (i === 0 ? { kind: 'fail', status: 503, retryAfter: '1' } : { kind: 'ok' }));
      child = await startServiceProcess(
        {
          ...baseEnv(dir),
          ...database,
          ERP_NOTIFY_URL: erp.url,
          ERP_WEBHOOK_SECRET: SECRET,
          OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
          OTEL_BSP_SCHEDULE_DELAY: '100',
        },
        20_000,
        CLI_SERVE,
      );
      const simulator = /"simulator":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(child.output())?.[1];
      expect(simulator).toBeDefined();

      // A probe and a scrape: left out of the traces.
      expect((await fetch(`${child.url}/health/ready`)).status).toBe(200);
      expect((await fetch(`${child.url}/metrics`, { headers: OPERATOR_AUTH })).status).toBe(200);
      const created = await fetch(`${child.url}/api/payment-links`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ order_id: 'TRACE-1:1', nominal: 150000 }),
      });
      expect(created.status).toBe(201);
      const link = (await created.json()) as { gateway_order_id: string };
      const paid = await fetch(`${simulator}/_sim/transactions/${link.gateway_order_id}/pay`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ payment_type: 'qris' }),
      });
      expect(paid.status).toBe(200);
      const purchase = (await paid.json()) as { order_id: string };

      await erp.waitFor((r) => r.accepted().length >= 1, 15_000);
      expect(erp.deliveries.map((d) => d.answered)).toEqual([503, 200]);
      const eventId = erp.deliveries[0]?.webhookId;

      // Both attempts exported (the batch is sent every 100 ms).
      const spans = otlp.spans;
      await expect
        .poll(
          () =>
            spans.filter((s) => s.name === 'ERP delivery attempt' && s.attributes['paylink.event_id'] === eventId)
              .length,
          {
            timeout: 10_000,
          },
        )
        .toBe(2);
      expect(spans.filter((s) => /^GET \/(health|metrics)/.test(s.name))).toEqual([]);
      expect(spans.some((s) => s.name === 'POST /api/payment-links')).toBe(true);
      const webhook = spans.find((s) => s.kind === 2 && s.attributes['http.route'] === '/webhook/midtrans');
      expect(webhook, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
      const trace = spans.filter((s) => s.traceId === webhook?.traceId);
      console.log(`trace ${webhook?.traceId}\n${tree(trace)}`);

      // The webhook request, with the order it was about; under it only its own work (no worker
      // round woken by it: those run outside the request).
      expect(webhook?.name).toBe('POST /webhook/midtrans');
      expect(webhook?.service).toBe('paylink');
      // The writes: one SQLite transaction, or PostgreSQL's statements (pg's own spans).
      const isPg = (s: Span) =>
        s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql';
      const underRequest = trace.filter((s) => s.parentSpanId === webhook?.spanId);
      if (kind === 'sqlite') expect(underRequest.map((s) => s.name).sort()).toEqual(['GET', 'sqlite transaction']);
      else {
        // No transaction span of paylink's own here: the attempts hang from the request itself.
        expect(
          underRequest
            .filter((s) => !isPg(s))
            .map((s) => s.name)
            .sort(),
        ).toEqual(['ERP delivery attempt', 'ERP delivery attempt', 'GET']);
        expect(underRequest.filter(isPg).length).toBeGreaterThan(0);
      }
      expect(webhook?.attributes['paylink.gateway_order_id']).toBe(purchase.order_id);
      expect(webhook?.attributes['paylink.order_id']).toBe('TRACE-1:1');
      expect(webhook?.attributes['paylink.account']).toBe('default');
      expect(webhook?.attributes['paylink.event_id']).toBe(eventId);
      // The status call that confirmed the notification: a client span under the request.
      const statusCall = trace.find(
        (s) => s.kind === 3 && String(s.attributes['url.full']).endsWith(`/v2/${purchase.order_id}/status`),
      );
      expect(statusCall, tree(trace)).toBeDefined();
      // Both attempts of the event it wrote, each with its own ERP POST under it.
      const attempts = trace.filter((s) => s.name === 'ERP delivery attempt');
      expect(attempts.map((a) => a.attributes['paylink.attempt']).sort()).toEqual([1, 2]);
      for (const a of attempts) {
        expect(a.attributes).toMatchObject({
          'paylink.account': 'default',
          'paylink.event_id': eventId,
          'paylink.order_id': 'TRACE-1:1',
          // The event names the link's gateway id; its purchase's is the notification's (above).
          'paylink.gateway_order_id': link.gateway_order_id,
        });
        expect(
          trace.some(
            (s) =>
              s.parentSpanId === a.spanId &&
              s.kind === 3 &&
              s.attributes['url.full'] === erp?.url.replace(ERP_URL_TOKEN, '[redacted]'),
          ),
        ).toBe(true);
      }
      expect(attempts.map((a) => a.attributes['paylink.outcome']).sort()).toEqual(['delivered', 'failed']);

      expect(JSON.stringify(spans)).not.toContain(ERP_URL_TOKEN);
      // Log lines written inside a span carry its ids.
      const processed = child
        .output()
        .split('\n')
        .find((l) => l.includes('"msg":"gateway report processed"'));
      expect(processed && JSON.parse(processed)).toMatchObject({ trace_id: webhook?.traceId });
      // The SDK was loaded, as the recorder sees it (what the next test relies on); the loader
      // hook that patches pg only where pg is used.
      const modules = loadedModules(path.join(dir, 'modules.txt'));
      expect(modules.some((u) => u.includes('/@opentelemetry/'))).toBe(true);
      expect(modules.some((u) => u.includes('/import-in-the-middle/hook.mjs'))).toBe(kind === 'postgres');
    },
    40_000,
  );

  it('without an endpoint no OpenTelemetry module is loaded, and log lines carry no trace ids', async () => {
    dir = tempDir('paylink-tracing-');
    child = await startServiceProcess(baseEnv(dir), 20_000, CLI_SERVE);
    expect((await fetch(`${child.url}/health`)).status).toBe(200);
    const modules = loadedModules(path.join(dir, 'modules.txt'));
    // The recorder saw the service's own modules (so an empty list cannot pass)…
    expect(modules.some((u) => u.endsWith('/src/platform/tracing.ts'))).toBe(true);
    expect(modules.some((u) => u.includes('/node_modules/fastify/'))).toBe(true);
    // …and nothing of OpenTelemetry, nor the module that loads it.
    expect(
      modules.filter(
        (u) => u.includes('@opentelemetry') || u.includes('tracing-otel') || u.includes('import-in-the-middle'),
      ),
    ).toEqual([]);
    expect(child.output()).not.toContain('trace_id');
  });

  it('refuses to start with an OTLP protocol it cannot send', async () => {
    dir = tempDir('paylink-tracing-');
    await expect(
      startServiceProcess(
        { ...baseEnv(dir), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
        20_000,
        CLI_SERVE,
      ),
    ).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(got "grpc"\)/);
  });
});
