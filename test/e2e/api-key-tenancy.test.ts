/**
 * API keys are one tenant: every key acts for the same merchant and sees every order; only the
 * Idempotency-Key space is per key. The reference says so where it describes the keys.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { startE2E, type E2EContext } from '../helpers/e2e.js';
import { basicAuth } from '../helpers/services.js';

const ERP = 'erp-key-tenant-one-0123456789';
const SHOP = 'erp-key-tenant-two-0123456789';

describe.each(DATABASE_KINDS)('API keys (%s)', (kind) => {
  let e: E2EContext;
  beforeEach(async () => {
    e = await startE2E(kind, { env: { API_KEYS: `${ERP},${SHOP}` } });
  });
  afterEach(async () => e.close());
  const create = (key: string, orderId: string, nominal: number, idem: string) =>
    e.app.inject({
      method: 'POST',
      url: '/api/payment-links',
      headers: { authorization: `Bearer ${key}`, 'idempotency-key': idem },
      payload: { order_id: orderId, nominal },
    });

  it('any key reads and acts on any order (one merchant), while the same Idempotency-Key under two keys is two requests', async () => {
    const a = await create(ERP, 'TEN-1', 10_000, 'same-key');
    expect(a.statusCode).toBe(201);
    const b = await create(SHOP, 'TEN-2', 20_000, 'same-key');
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json()).toMatchObject({ order_id: 'TEN-2', nominal: 20_000 });
    const seen = await e.app.inject({ method: 'GET', url: '/api/payment-links/TEN-1', headers: { 'x-api-key': SHOP } });
    expect(seen.statusCode).toBe(200);
    expect(seen.json()).toMatchObject({ order_id: 'TEN-1' });
  });

  it('the reference says so where it describes the keys', async () => {
    const doc = (
      await e.app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: basicAuth() } })
    ).json() as { components: { securitySchemes: Record<string, { description: string }> } };
    for (const name of ['apiKeyBearer', 'apiKeyHeader'])
      expect(doc.components.securitySchemes[name]?.description).toMatch(
        /same merchant \(one tenant\).*Idempotency-Keys are kept per API key/,
      );
  });
});
