/**
 * Alerts to a real receiver on loopback, signed like ERP events: the ERP down past the threshold
 * fires `erp_endpoint_failing` exactly once (two instances on PostgreSQL included) and its return
 * resolves it once; an exhausted event fires `erp_delivery_dead`; an alert receiver that is down
 * delays no ERP event; `format: "slack"` sends `{text}`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { DATABASE_KINDS, TEST_DATABASE_URL } from '../helpers/stores.js';
import { basicAuth, makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';
import { createOutbox, type Outbox } from '../../src/workers/outbox/worker.js';
import { fireAlert } from '../../src/domain/alerts/alerts.js';
import type { Store } from '../../src/storage/contract.js';

const ALERT_SECRET = 'alert-receiver-secret-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class FakeClock {
  t = new Date('2026-11-22T03:00:00.000Z').getTime();
  now = () => new Date(this.t);
  advance(ms: number) {
    this.t += ms;
  }
}

async function enqueue(store: Store, n: number, tag = 'O', now?: Date): Promise<void> {
  for (let i = 0; i < n; i++)
    await store.outbox.enqueue(
      {
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: `${tag}-${i}`,
        orderId: `${tag}-${i}`,
        mercantId: 'M',
        statusVersion: 1,
        payload: JSON.stringify({ order_id: `${tag}-${i}` }),
      },
      now,
    );
}

const alertsOf = (r: ErpReceiver, alert: string) => r.accepted().filter((d) => d.json?.alert === alert);

describe.each(DATABASE_KINDS)('alerts (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  let rx: ErpReceiver;
  const extra: Outbox[] = [];
  let storeB: Store | undefined;

  beforeEach(async () => {
    erp = await startErpReceiver();
    rx = await startErpReceiver({ secret: ALERT_SECRET });
  });
  afterEach(async () => {
    for (const w of extra.splice(0)) await w.stop();
    await ctx.close();
    await storeB?.close();
    storeB = undefined;
    await erp.close();
    await rx.close();
  });

  async function app(options: Parameters<typeof makeTestApp>[2] = {}): Promise<void> {
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0, ...options });
    await patchRuntimeConfig(ctx.services.runtimeConfig, {
      erp: { notify_url: erp.url, timeout_ms: 2_000 },
      alerts: { url: rx.url, secret: ALERT_SECRET, erp_failing_after_minutes: 0.01 },
    });
  }

  it('the ERP down past the threshold: exactly one erp_endpoint_failing firing, signed; one resolved when it answers again', async () => {
    await app({ outbox: { random: () => 0 } });
    erp.setMode({ kind: 'fail', status: 503 });
    await enqueue(ctx.services.store, 20);
    ctx.services.outbox.start();
    if (kind === 'postgres') {
      // A second instance over its own pool, seeing the same failures.
      storeB = await ctx.db.open();
      const b = createOutbox(
        { ...ctx.services, store: storeB, logger: ctx.services.logger },
        { instanceId: 'second', random: () => 0 },
      );
      b.start();
      extra.push(b);
    }
    await rx.waitFor((r) => alertsOf(r, 'erp_endpoint_failing').length >= 1, 15_000);
    await sleep(1_500);
    const firing = alertsOf(rx, 'erp_endpoint_failing');
    expect(firing).toHaveLength(1);
    expect(firing[0]).toMatchObject({ verified: true });
    expect(firing[0]?.json).toMatchObject({
      type: 'alert.firing',
      alert: 'erp_endpoint_failing',
      subject: erp.url,
      started_at: expect.stringMatching(/\+07:00$/),
    });
    expect(firing[0]?.json).not.toHaveProperty('account');
    expect(firing[0]?.json).not.toHaveProperty('resolved_at');
    const open = await ctx.services.store.alerts.listOpen();
    expect(open.map((a) => a.alert)).toEqual(['erp_endpoint_failing']);

    erp.setMode({ kind: 'ok' });
    await rx.waitFor((r) => alertsOf(r, 'erp_endpoint_failing').length >= 2, 20_000);
    await erp.waitFor((r) => r.accepted().length >= 20, 10_000);
    await sleep(1_000);
    const all = alertsOf(rx, 'erp_endpoint_failing').map((d) => d.json?.type);
    expect(all).toEqual(['alert.firing', 'alert.resolved']);
    expect(alertsOf(rx, 'erp_endpoint_failing')[1]?.json).toMatchObject({ resolved_at: expect.any(String) });
    expect(await ctx.services.store.alerts.listOpen()).toEqual([]);
  }, 40_000);

  it('an event exhausted (retry_for_hours 0.01) fires one erp_delivery_dead; a retry by hand resolves it', async () => {
    const clock = new FakeClock();
    await app({ clock, outbox: { random: () => 0.5 } });
    await patchRuntimeConfig(ctx.services.runtimeConfig, { erp: { retry_for_hours: 0.01 } });
    erp.setMode({ kind: 'fail', status: 500 });
    await enqueue(ctx.services.store, 1, 'DEAD', clock.now());
    for (let i = 0; i < 12; i++) {
      await ctx.services.outbox.runOnce();
      clock.advance(10_000);
    }
    await ctx.services.outbox.drain();
    const dead = alertsOf(rx, 'erp_delivery_dead');
    expect(dead).toHaveLength(1);
    expect(dead[0]?.json).toMatchObject({
      type: 'alert.firing',
      details: { order_id: 'DEAD-0' },
    });
    const [event] = (await ctx.services.store.outbox.list({ state: 'dead' })).items;
    expect(dead[0]?.json?.subject).toBe(event?.eventId);
    // A second pass finds it open already: no second firing.
    expect(
      await fireAlert(ctx.services, 'default', {
        alert: 'erp_delivery_dead',
        subject: event?.eventId ?? '',
        summary: 'x',
        details: {},
      }),
    ).toBe(false);
    erp.setMode({ kind: 'ok' });
    const retry = await ctx.app.inject({
      method: 'POST',
      url: `/api/deliveries/${event?.eventId ?? ''}/retry`,
      headers: { authorization: basicAuth() },
    });
    expect(retry.statusCode).toBe(200);
    await ctx.services.outbox.drain();
    expect(alertsOf(rx, 'erp_delivery_dead').map((d) => d.json?.type)).toEqual(['alert.firing', 'alert.resolved']);
    expect(await ctx.services.store.alerts.listOpen()).toEqual([]);
  });

  it('an alert receiver that is down delays no ERP event', async () => {
    await app();
    rx.setMode({ kind: 'slow', delayMs: 3_000 });
    for (let i = 0; i < 40; i++)
      await fireAlert(ctx.services, 'default', {
        alert: 'payment_stuck_pending',
        subject: `STUCK-${i}`,
        summary: 'stuck',
        details: {},
      });
    ctx.services.outbox.start();
    await sleep(300);
    const t0 = Date.now();
    await enqueue(ctx.services.store, 10, 'ERP');
    ctx.services.outbox.wake();
    await erp.waitFor((r) => r.accepted().length >= 10, 5_000);
    const slowest = Math.max(...erp.accepted().map((d) => d.receivedAt - t0));
    expect(slowest).toBeLessThan(1_000);
    expect(rx.deliveries.length).toBeGreaterThan(0);
  });

  it('format slack: a body Slack incoming webhooks take', async () => {
    await app();
    await patchRuntimeConfig(ctx.services.runtimeConfig, { alerts: { format: 'slack' } });
    await fireAlert(ctx.services, 'default', {
      alert: 'reconciliation_mismatch',
      subject: 'imp-1',
      summary: '2 rows differ',
      details: {},
    });
    await ctx.services.outbox.drain();
    expect(rx.accepted()).toHaveLength(1);
    const body = rx.accepted()[0]?.json;
    expect(Object.keys(body ?? {})).toEqual(['text']);
    expect(String(body?.text)).toMatch(/^FIRING: reconciliation_mismatch: 2 rows differ \(imp-1, since .*\+07:00\)$/);
  });
});

describe.runIf(TEST_DATABASE_URL)('alerts: exactly one open row per alert and subject across instances', () => {
  it('two stores opening the same alert at once: one row, one notification', async () => {
    const ctx = await makeTestApp('postgres', {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    const storeB = await ctx.db.open();
    try {
      await patchRuntimeConfig(ctx.services.runtimeConfig, { alerts: { url: 'http://127.0.0.1:9/alerts' } });
      const a = { alert: 'gateway_unreachable' as const, subject: 'api', summary: 's', details: {} };
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          fireAlert({ ...ctx.services, store: i % 2 === 0 ? ctx.services.store : storeB }, 'default', a),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
      const rows = await ctx.store.db.selectFrom('outbox_events').select('lane').where('lane', '=', 'alert').execute();
      expect(rows).toHaveLength(1);
    } finally {
      await storeB.close();
      await ctx.close();
    }
  });
});
