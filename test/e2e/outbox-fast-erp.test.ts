/**
 * A fast ERP (a real receiver on loopback answering at once): a backlog is delivered through no
 * more connections than requests in flight at once (each lane reuses its connection instead of
 * opening another while the last answer's connection is being freed).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import diagnostics from 'node:diagnostics_channel';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig } from '../helpers/seed.js';

const EVENTS = 300;

describe.each(DATABASE_KINDS)('delivery through a fast ERP (%s)', (kind) => {
  let ctx: TestContext;
  let erp: ErpReceiver;
  const seen = { connections: 0, inFlight: 0, most: 0 };
  const connected = () => void seen.connections++;
  const created = () => void (seen.most = Math.max(seen.most, ++seen.inFlight));
  const answered = () => void seen.inFlight--;

  beforeEach(async () => {
    erp = await startErpReceiver();
    ctx = await makeTestApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(ctx.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 5_000 } });
    Object.assign(seen, { connections: 0, inFlight: 0, most: 0 });
    diagnostics.subscribe('undici:client:connected', connected);
    diagnostics.subscribe('undici:request:create', created);
    diagnostics.subscribe('undici:request:headers', answered);
    diagnostics.subscribe('undici:request:error', answered);
  });
  afterEach(async () => {
    diagnostics.unsubscribe('undici:client:connected', connected);
    diagnostics.unsubscribe('undici:request:create', created);
    diagnostics.unsubscribe('undici:request:headers', answered);
    diagnostics.unsubscribe('undici:request:error', answered);
    await ctx.close();
    await erp.close();
  });

  it('opens one connection per request in flight at most', async () => {
    for (let i = 0; i < EVENTS; i++)
      await ctx.services.store.outbox.enqueue({
        eventId: randomUUID(),
        eventType: 'payment.status_changed',
        orderKey: `F-${i}`,
        orderId: `F-${i}`,
        mercantId: 'M',
        statusVersion: 1,
        payload: JSON.stringify({ order_id: `F-${i}` }),
      });
    expect(await ctx.services.outbox.drain()).toBe(EVENTS);
    expect(new Set(erp.accepted().map((d) => d.webhookId)).size).toBe(EVENTS);
    expect(seen.most).toBeGreaterThan(1);
    expect(seen.connections).toBeLessThanOrEqual(seen.most);
  });
});
