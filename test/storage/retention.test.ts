/**
 * Retention: what is older than `retention.days` goes (delivered events with their attempts,
 * processed notifications, expired idempotency records), batch by batch; transactions, undelivered
 * events, unverified notifications and anything recent stay.
 */
import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { DATABASE_KINDS, freshStoreEachTest } from '../helpers/stores.js';
import type { Store } from '../../src/storage/contract.js';
import { loadConfig } from '../../src/config/env.js';
import { createRuntimeConfigService, defaultRuntimeConfig } from '../../src/config/runtime.js';
import { createPruner } from '../../src/workers/pruner.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-22T03:00:00.000Z');

function charge(orderId: string) {
  return {
    id: randomUUID(),
    orderId,
    gatewayOrderId: orderId,
    mercantId: 'M',
    kind: 'charge' as const,
    attempt: 1,
    nominal: 10_000,
    status: 'pending' as const,
    paymentUrl: null,
    paymentLinkId: null,
    snapToken: null,
    requestHash: null,
    requestJson: null,
    gatewayJson: null,
    expireAt: null,
  };
}

describe.each(DATABASE_KINDS)('retention (%s)', (kind) => {
  let store: Store;
  let clock = NOW;
  freshStoreEachTest(
    kind,
    (_d, s) => {
      store = s;
    },
    { open: () => ({ now: () => clock }) },
  );

  /** At `when`: a transaction, its applied notification and an ERP event, delivered or left failing. */
  async function history(
    tag: string,
    when: Date,
    delivered: boolean,
    result: 'applied' | 'unverified' = 'applied',
  ): Promise<number> {
    clock = when;
    await store.transactions.insert(charge(tag));
    await store.notifications.record({
      dedupeKey: `k-${tag}`,
      gatewayOrderId: tag,
      transactionRef: null,
      gatewayTransactionId: null,
      transactionStatus: 'settlement',
      statusCode: '200',
      source: 'webhook',
      result,
      payload: '{}',
    });
    const ev = await store.outbox.enqueue(
      {
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: tag,
        orderId: tag,
        mercantId: 'M',
        statusVersion: 1,
        payload: '{}',
      },
      when,
    );
    const [claimed] = await store.outbox.claimDue('w', when, 60_000, 1);
    if (!claimed) throw new Error('not claimed');
    const outcome = delivered
      ? { state: 'delivered' as const }
      : { state: 'failed' as const, nextAttemptAt: new Date(NOW.getTime() + DAY).toISOString() };
    await store.outbox.complete(claimed.seq, claimed.leaseToken, 'w', {
      ...outcome,
      startedAt: when.toISOString(),
      statusCode: delivered ? 204 : 500,
      latencyMs: 1,
      error: delivered ? null : 'HTTP 500',
    });
    return ev.seq;
  }

  it('deletes only what is old and done, in batches, and keeps every transaction', async () => {
    const old = new Date(NOW.getTime() - 40 * DAY);
    const oldSeqs: number[] = [];
    for (let i = 0; i < 7; i++) oldSeqs.push(await history(`OLD-${i}`, old, true));
    const failing = await history('OLD-FAILING', old, false);
    await history('OLD-UNVERIFIED', old, true, 'unverified');
    const recent = await history('RECENT', new Date(NOW.getTime() - 2 * DAY), true);
    await store.idempotency.claim('s', 'expired', 'h', { now: old, retentionMs: DAY, lockMs: 1000 });
    await store.idempotency.claim('s', 'live', 'h', { now: NOW, retentionMs: DAY, lockMs: 1000 });
    clock = NOW;

    const runtimeConfig = createRuntimeConfigService(store, () => defaultRuntimeConfig(loadConfig({ PORT: '0' })));
    const pruner = createPruner(
      { store, runtimeConfig, clock: { now: () => NOW }, logger: pino({ level: 'silent' }) },
      { batchSize: 3, pauseMs: 0 },
    );
    // Default 30 days: 40-day-old records go.
    const report = await pruner.runOnce();
    expect(report).toEqual({ events: 8, notifications: 8, idempotency: 1 });

    const left = await store.outbox.list({ limit: 100 });
    expect(left.items.map((e) => e.orderKey).sort()).toEqual(['OLD-FAILING', 'RECENT']);
    expect(
      (await store.outbox.attemptsFor([...oldSeqs, failing, recent])).map((a) => a.eventSeq).sort((x, y) => x - y),
    ).toEqual([failing, recent].sort((x, y) => x - y));
    expect((await store.notifications.listByResult('unverified', 10)).map((n) => n.gatewayOrderId)).toEqual([
      'OLD-UNVERIFIED',
    ]);
    expect(await store.notifications.findByDedupeKey('k-RECENT')).toBeDefined();
    expect(await store.notifications.findByDedupeKey('k-OLD-0')).toBeUndefined();
    expect((await store.transactions.list({ limit: 100 })).items).toHaveLength(10);
    expect(await store.idempotency.get('s', 'expired')).toBeUndefined();
    expect(await store.idempotency.get('s', 'live')).toBeDefined();

    // Nothing old left: a second run deletes nothing.
    expect(await pruner.runOnce()).toEqual({ events: 0, notifications: 0, idempotency: 0 });
  });

  it('follows retention.days from the runtime config', async () => {
    await history('TEN-DAYS', new Date(NOW.getTime() - 10 * DAY), true);
    clock = NOW;
    const runtimeConfig = createRuntimeConfigService(store, () => defaultRuntimeConfig(loadConfig({ PORT: '0' })), 0);
    const pruner = createPruner(
      { store, runtimeConfig, clock: { now: () => NOW }, logger: pino({ level: 'silent' }) },
      { pauseMs: 0 },
    );
    expect((await pruner.runOnce()).events).toBe(0);
    expect(await runtimeConfig.save({ retention: { days: 7 } }, 0, 'ops')).toBe(true);
    expect((await pruner.runOnce()).events).toBe(1);
  });

  it("started, it runs on its own at the injected clock's time, and stops", async () => {
    // Years from the real date, so a run at the real time would delete nothing.
    const at = new Date('2031-01-01T00:00:00.000Z');
    for (let i = 0; i < 3; i++) await history(`AUTO-${i}`, new Date(at.getTime() - 40 * DAY), true);
    await history('AUTO-RECENT', new Date(at.getTime() - 2 * DAY), true);
    clock = at;
    const runtimeConfig = createRuntimeConfigService(store, () => defaultRuntimeConfig(loadConfig({ PORT: '0' })));
    const pruner = createPruner(
      { store, runtimeConfig, clock: { now: () => at }, logger: pino({ level: 'silent' }) },
      { intervalMs: 1, batchSize: 2, pauseMs: 0 },
    );
    pruner.start();
    try {
      await expect
        .poll(async () => (await store.outbox.list({ limit: 100 })).items.map((e) => e.orderKey), {
          timeout: 10_000,
          interval: 20,
        })
        .toEqual(['AUTO-RECENT']);
    } finally {
      await pruner.stop();
    }
    expect(await store.notifications.findByDedupeKey('k-AUTO-0')).toBeUndefined();
  });
});
