/**
 * The console's replay form on the Deliveries page (a one-time key: a re-POST replays once; a dry
 * run only counts) and the firing alerts on the Overview.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { basicAuth } from '../helpers/services.js';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { startErpReceiver, type ErpReceiver } from '../helpers/erp-receiver.js';
import { patchRuntimeConfig, seedTransaction } from '../helpers/seed.js';
import { formState, hiddenFields } from '../helpers/console-forms.js';
import { ingestGatewayReport } from '../../src/domain/reports/ingest.js';
import { signedReport } from '../../src/domain/reports/trust.js';
import { fireAlert } from '../../src/domain/alerts/alerts.js';

describe.each(DATABASE_KINDS)('console: replay a window, firing alerts (%s)', (kind) => {
  let t: LoggedApp;
  let erp: ErpReceiver;
  beforeEach(async () => {
    erp = await startErpReceiver();
    t = await makeLoggedApp(kind, {}, { simulatorBaseUrl: 'http://127.0.0.1:9', runtimeConfigCacheMs: 0 });
    await patchRuntimeConfig(t.services.runtimeConfig, { erp: { notify_url: erp.url, timeout_ms: 2_000 } });
  });
  afterEach(async () => {
    await t.close();
    await erp.close();
  });
  const get = (url: string) => t.app.inject({ url, headers: { authorization: basicAuth() } });
  const post = (cookie: string, fields: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: '/console/deliveries/replay',
      payload: new URLSearchParams(fields).toString(),
      headers: { authorization: basicAuth(), cookie, 'content-type': 'application/x-www-form-urlencoded' },
    });

  it('the replay form counts on a dry run, replays once per key, and refuses a form without its key', async () => {
    const since = new Date(Date.now() - 1_000).toISOString();
    for (const orderId of ['C:1', 'C:2']) {
      const tx = await seedTransaction(t.services.store, { orderId });
      await ingestGatewayReport(
        t.services,
        signedReport({
          order_id: tx.gatewayOrderId,
          status_code: '200',
          gross_amount: '150000.00',
          transaction_status: 'settlement',
          transaction_id: `tx-${orderId}`,
        }),
        'webhook',
      );
    }
    await t.services.outbox.drain();
    expect(erp.accepted()).toHaveLength(2);

    const page = await get('/console/deliveries');
    const { cookie } = formState(page);
    const fields = hiddenFields(page.body, '/console/deliveries/replay');
    expect(fields._key).toBeTruthy();

    const dry = await post(cookie, { ...fields, since, dry_run: '1' });
    expect(dry.statusCode).toBe(200);
    expect(dry.body).toContain('2 events match this window.');
    expect(await t.services.outbox.drain()).toBe(0);

    for (let i = 0; i < 2; i++) {
      const res = await post(cookie, { ...fields, since });
      expect(res.statusCode).toBe(303);
      expect(res.headers.location).toBe('/console/deliveries?done=replay');
    }
    await t.services.outbox.drain();
    expect(erp.accepted()).toHaveLength(4);

    const noKey = await post(cookie, { _csrf: fields._csrf ?? '', since });
    expect(noKey.statusCode).toBe(403);
    await t.services.outbox.drain();
    expect(erp.accepted()).toHaveLength(4);
  });

  it('the overview lists what is firing, and nothing when nothing is', async () => {
    expect((await get('/console')).body).not.toContain('data-alerts=');
    await fireAlert(t.services, 'default', {
      alert: 'erp_endpoint_failing',
      subject: 'https://erp.example.com/events',
      summary: 'No 2xx for 16 min',
      details: {},
    });
    const body = (await get('/console')).body;
    expect(body).toContain('data-alerts="1"');
    expect(body).toContain('data-alert="erp_endpoint_failing"');
    expect(body).toContain('No 2xx for 16 min');
  });
});
