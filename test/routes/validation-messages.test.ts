/**
 * Refusals in plain words, one message per problem, in the same shape from the API, the
 * configuration endpoint and the environment read at start-up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeLoggedApp, type LoggedApp } from '../helpers/operator-app.js';
import { basicAuth } from '../helpers/services.js';
import { ConfigError, loadConfig } from '../../src/config/env.js';
import { PAYMENT_TYPES } from '../../src/gateway/charge-methods.js';

const KEY = 'validation-messages-key-0123456789';

function configProblems(env: Record<string, string>): string[] {
  try {
    loadConfig({ MIDTRANS_MODE: 'simulator', ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('validation messages', () => {
  let ctx: LoggedApp;
  beforeAll(async () => {
    ctx = await makeLoggedApp('sqlite', { API_KEYS: KEY });
  });
  afterAll(async () => ctx.close());
  const api = (url: string, payload: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url,
      payload: JSON.stringify(payload),
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    });
  const config = (payload: unknown) =>
    ctx.app.inject({
      method: 'POST',
      url: '/api/config',
      payload: JSON.stringify(payload),
      headers: { authorization: basicAuth(), 'content-type': 'application/json' },
    });

  it('a value outside an enum: one message naming the accepted values', async () => {
    const res = await api('/api/charge', { order_id: 'V-1', nominal: 1000, payment_type: 'ovo' });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.errors).toEqual([{ path: 'payment_type', message: `must be one of: ${PAYMENT_TYPES.join(', ')}` }]);
    expect(body.detail).toBe(`payment_type must be one of: ${PAYMENT_TYPES.join(', ')}.`);
  });

  it('a configuration number out of range: one message naming the range', async () => {
    const res = await config({ links: { default_expiry_minutes: -5 } });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      { path: 'links.default_expiry_minutes', message: 'must be a whole number from 5 to 43200 (or null)' },
    ]);
    const mode = await config({ gateway: { mode: 'live' } });
    expect(mode.json().errors).toEqual([
      { path: 'gateway.mode', message: 'must be one of: simulator, sandbox, production (or null)' },
    ]);
  });

  it('unknown, missing and mistyped fields: one plain message each', async () => {
    const res = await api('/api/payment-links', { nominal: true, extra: 1 });
    expect(res.statusCode).toBe(400);
    const errors = res.json().errors as Array<{ path: string; message: string }>;
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: 'order_id', message: 'is required' },
        { path: 'extra', message: 'is not a known field' },
        { path: 'nominal', message: 'must be a number or a string' },
      ]),
    );
    expect(errors).toHaveLength(3);
    for (const e of errors)
      expect(e.message).not.toMatch(
        /must be equal to constant|must match a schema in anyOf|must have required property/,
      );
  });

  it('the environment at start-up: one problem each, in the same words', () => {
    expect(configProblems({ PORT: 'abc' })).toEqual(['PORT must be a port number 0-65535 (got "abc")']);
    expect(configProblems({ LOG_LEVEL: 'loud' })).toEqual([
      'LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent',
    ]);
    expect(configProblems({ MIDTRANS_MODE: 'live' })).toEqual(
      expect.arrayContaining(['MIDTRANS_MODE must be one of: simulator, sandbox, production']),
    );
  });
});
