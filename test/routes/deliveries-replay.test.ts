/**
 * POST /api/deliveries/replay against a real ERP receiver: a window's events are delivered again
 * under their own webhook-id, `dry_run` changes nothing, one audit line names the operator, a
 * viewer is refused in the domain function, and bad input is a 400 problem.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import { replayDeliveries } from '../../src/domain/erp-events/replay.js';

describe.each(DATABASE_KINDS)('POST /api/deliveries/replay (%s)', (kind) => {
  let ctx: LoggedApp;
  let erp: ErpReceiver;
  const auth = { authorization: basicAuth() };
  beforeEach(async () => {
    erp = await startErpReceiver();
    ctx = await makeLoggedApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(ctx.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    await ctx.close();
    await erp.close();
  });

  async function paid(orderId: string): Promise<string> {
    const t = await seedTransaction(ctx.services.store, { orderId });
    const r = await ingestGatewayReport(
      ctx.services,
      signedReport({
        order_id: t.gatewayOrderId,
        status_code: '200',
        gross_amount: '150000.00',
        transaction_status: 'settlement',
        transaction_id: `tx-${orderId}`,
      }),
      'webhook',
    );
    if (!r.eventId) throw new Error('event expected');
    return r.eventId;
  }
  const replay = (payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: '/api/deliveries/replay', headers: auth, payload });

  it('re-delivers the events of a window under their own webhook-id; dry_run changes nothing; one audit line', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const ids = [await paid('R:1'), await paid('R:2'), await paid('R:3')];
    await ctx.services.outbox.drain();
    expect(erp.accepted().map((d) => d.webhookId)).toEqual(ids);

    const dry = await replay({ since, order_id: 'R:2', dry_run: true });
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toEqual({ count: 1, event_ids: [ids[1]] });
    expect(await ctx.services.outbox.drain()).toBe(0);
    expect(erp.accepted()).toHaveLength(3);

    const res = await replay({ since, status: 'delivered' });
    expect(res.json()).toEqual({ count: 3, event_ids: ids });
    await ctx.services.outbox.drain();
    const again = erp.accepted().slice(3);
    expect(again.map((d) => d.webhookId)).toEqual(ids);
    expect(again.map((d) => d.body)).toEqual(
      erp
        .accepted()
        .slice(0, 3)
        .map((d) => d.body),
    );
    // A window that ended before the events: nothing.
    expect((await replay({ since: '2020-01-01T00:00:00+07:00', until: since })).json()).toEqual({
      count: 0,
      event_ids: [],
    });

    const lines = (await ctx.lines()).filter(
      (l) => (l.audit as { action?: string } | undefined)?.action?.startsWith('delivery_replay') === true,
    );
    expect(lines.map((l) => (l.audit as { action: string; actor: string }).action)).toEqual([
      'delivery_replay_dry_run',
      'delivery_replay',
      'delivery_replay',
    ]);
    expect(lines.every((l) => (l.audit as { actor: string }).actor === 'operator:ops')).toBe(true);
    expect(lines[1]).toMatchObject({ count: 3, status: 'delivered' });
  });

  it("an operator limited to other accounts replays none of this account's events", async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    const id = await paid('R:9');
    await ctx.services.outbox.drain();
    const limited = { kind: 'operator' as const, user: 'f', role: 'finance' as const, accounts: ['other'] };
    for (const account of [undefined, 'default'])
      expect(await replayDeliveries(ctx.services, { since, account }, limited)).toEqual({ count: 0, eventIds: [] });
    expect(await ctx.services.outbox.drain()).toBe(0);
    const allowed = { ...limited, accounts: ['default'] };
    expect(await replayDeliveries(ctx.services, { since, dryRun: true }, allowed)).toEqual({
      count: 1,
      eventIds: [id],
    });
  });

  it('refuses a viewer in the domain function, and bad input with a 400 problem', async () => {
    await expect(
      replayDeliveries(
        ctx.services,
        { since: new Date().toISOString() },
        { kind: 'operator', user: 'v', role: 'viewer' },
      ),
    ).rejects.toMatchObject({ code: 'FORBIDDEN' });
    for (const body of [
      {},
      { since: 'yesterday' },
      { since: '2026-11-22T10:00:00' },
      { since: '2026-11-22T10:00:00Z', until: '2026-11-22T09:00:00Z' },
      { since: '2026-11-22T10:00:00Z', status: 'lost' },
      { since: '2026-11-22T10:00:00Z', extra: 1 },
    ]) {
      const r = await replay(body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    expect((await ctx.app.inject({ method: 'POST', url: '/api/deliveries/replay', payload: {} })).statusCode).toBe(401);
  });
});
