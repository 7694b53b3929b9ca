import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../../src/platform/errors.js';
import { parseExpireAtText, resolveExpiry } from '../../src/domain/orders/expiry.js';
import { gatewayTime } from '../../src/gateway/time.js';
import {
  LINK_CUSTOMER_LIMITS,
  itemsTotal,
  normalizeCustomer,
  normalizeItems,
  parseNominal,
} from '../../src/domain/orders/input.js';
import { paymentLinkBody } from '../../src/gateway/midtrans/requests.js';
import { truncate } from '../../src/gateway/order.js';
import { requestHash, stableStringify } from '../../src/domain/orders/request-hash.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? err.code : 'not-an-AppError';
  }
}

const NOW = new Date('2026-11-22T03:00:00.000Z'); // 10:00 in Jakarta

describe('expire_at', () => {
  it('parses ISO 8601 with an offset and Jakarta local time', () => {
    expect(parseExpireAtText('2026-12-01T10:00:00+07:00')?.toISOString()).toBe('2026-12-01T03:00:00.000Z');
    expect(parseExpireAtText('2026-12-01T03:00:00Z')?.toISOString()).toBe('2026-12-01T03:00:00.000Z');
    expect(parseExpireAtText('2026-12-01T03:00:00.5-0130')?.toISOString()).toBe('2026-12-01T04:30:00.500Z');
    expect(parseExpireAtText('2026-12-01 10:00:00')?.toISOString()).toBe('2026-12-01T03:00:00.000Z');
  });

  it('refuses malformed text, impossible dates and missing offsets', () => {
    for (const bad of [
      '2026-12-01T10:00:00',
      '2026-02-30T10:00:00Z',
      '2026-13-01 10:00:00',
      '2026-12-01 24:00:00',
      'tomorrow',
      '',
      '2026-12-01T10:00:00+25:00',
    ]) {
      expect(parseExpireAtText(bad), bad).toBeUndefined();
    }
  });

  it('computes start and minutes; past, now and far future are EXPIRY_INVALID', () => {
    expect(resolveExpiry(undefined, NOW, 1440)).toEqual({
      expireAt: new Date('2026-11-23T03:00:00.000Z'),
      startTime: '2026-11-22 10:00:00 +0700',
      durationMinutes: 1440,
    });
    expect(resolveExpiry('2026-11-22 10:30:30', NOW, 1440).durationMinutes).toBe(31);
    expect(codeOf(() => resolveExpiry('2026-11-22T10:00:00+07:00', NOW, 1))).toBe('EXPIRY_INVALID');
    expect(codeOf(() => resolveExpiry('2026-11-22 09:59:59', NOW, 1))).toBe('EXPIRY_INVALID');
    expect(codeOf(() => resolveExpiry('2030-01-01T00:00:00Z', NOW, 1))).toBe('EXPIRY_INVALID');
  });

  it('formats the gateway time in Jakarta', () => {
    expect(gatewayTime(new Date('2026-11-22T20:05:09.999Z'))).toBe('2026-11-23 03:05:09 +0700');
  });
});

describe('amounts and items', () => {
  it('nominal: positive whole rupiah, digit strings accepted', () => {
    expect(parseNominal(150000)).toBe(150000);
    expect(parseNominal(' 150000 ')).toBe(150000);
    expect(parseNominal(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
    for (const bad of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, '1e3', '-5', '1.0', '', '12a'])
      expect(
        codeOf(() => parseNominal(bad)),
        String(bad),
      ).toBe('AMOUNT_INVALID');
  });

  it('items: trimmed names cut to 50, negative prices allowed, quantity ≥ 1, at most 100 lines', () => {
    const items = normalizeItems([
      { id: 7, name: `  ${'n'.repeat(60)} `, price: '-500', quantity: '2' },
      { name: 'b', price: 2000, quantity: 1 },
    ]);
    expect(items).toEqual([
      { id: '7', name: 'n'.repeat(50), price: -500, quantity: 2 },
      { name: 'b', price: 2000, quantity: 1 },
    ]);
    expect(itemsTotal(items)).toBe(1000);
    expect(codeOf(() => normalizeItems([{ name: 'a', price: 1, quantity: 0 }]))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => normalizeItems([{ name: ' ', price: 1, quantity: 1 }]))).toBe('VALIDATION_FAILED');
    expect(
      codeOf(() => normalizeItems(Array.from({ length: 101 }, () => ({ name: 'a', price: 1, quantity: 1 })))),
    ).toBe('VALIDATION_FAILED');
    expect(codeOf(() => itemsTotal([{ name: 'a', price: -1, quantity: 1 }]))).toBe('AMOUNT_INVALID');
    expect(codeOf(() => itemsTotal([{ name: 'a', price: Number.MAX_SAFE_INTEGER, quantity: 2 }]))).toBe(
      'AMOUNT_INVALID',
    );
  });

  it('property: the total is Σ price × quantity of what was sent, and the gateway body carries exactly that', () => {
    const item = fc.record({
      name: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => s.trim().length > 0),
      price: fc.integer({ min: -1_000_000, max: 10_000_000 }),
      quantity: fc.integer({ min: 1, max: 50 }),
    });
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 100 }), (raw) => {
        // computed independently of the code under test, from the request as sent
        const expected = raw.reduce((sum, it) => sum + BigInt(it.price) * BigInt(it.quantity), 0n);
        const items = normalizeItems(raw);
        if (expected <= 0n || expected > BigInt(Number.MAX_SAFE_INTEGER)) {
          expect(codeOf(() => itemsTotal(items))).toBe('AMOUNT_INVALID');
          return;
        }
        const nominal = itemsTotal(items);
        expect(BigInt(nominal)).toBe(expected);
        const expiry = resolveExpiry(undefined, NOW, 60);
        const body = paymentLinkBody({
          gatewayOrderId: 'X',
          paymentLinkId: 'pl-x',
          nominal,
          items,
          expiry,
          enabledPayments: [],
        });
        const lines = body.item_details as Array<{ price: number; quantity: number; name: string }>;
        expect(lines).toHaveLength(raw.length);
        expect(lines.reduce((sum, l) => sum + BigInt(l.price) * BigInt(l.quantity), 0n)).toBe(expected);
        expect(BigInt((body.transaction_details as { gross_amount: number }).gross_amount)).toBe(expected);
        for (const l of lines) expect(l.name.length).toBeLessThanOrEqual(50);
      }),
      { numRuns: 300 },
    );
  });
});

describe('customer', () => {
  it('trims, drops empties, cuts names to the link limits and refuses unusable e-mail/phone', () => {
    expect(
      normalizeCustomer({ first_name: ' A ', last_name: '', email: ' a@b.co ', phone: ' 0812 ' }, LINK_CUSTOMER_LIMITS),
    ).toEqual({ first_name: 'A', email: 'a@b.co', phone: '0812' });
    expect(normalizeCustomer({ first_name: '  ' }, LINK_CUSTOMER_LIMITS)).toBeUndefined();
    expect(normalizeCustomer({ first_name: 'é'.repeat(70) }, LINK_CUSTOMER_LIMITS)?.first_name).toHaveLength(50);
    expect(codeOf(() => normalizeCustomer({ email: 'nope' }, LINK_CUSTOMER_LIMITS))).toBe('VALIDATION_FAILED');
    expect(codeOf(() => normalizeCustomer({ email: `${'a'.repeat(45)}@b.com` }, LINK_CUSTOMER_LIMITS))).toBe(
      'VALIDATION_FAILED',
    );
    expect(codeOf(() => normalizeCustomer({ phone: '0'.repeat(21) }, LINK_CUSTOMER_LIMITS))).toBe('VALIDATION_FAILED');
  });

  it('truncate never splits a surrogate pair', () => {
    expect(truncate('ab💳', 3)).toBe('ab');
    expect(truncate('ab💳', 4)).toBe('ab💳');
  });
});

describe('request hash', () => {
  it('ignores key order and undefined fields, sees every value', () => {
    expect(stableStringify({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"x":1,"y":2}]},"b":1}',
    );
    expect(requestHash({ a: 1, b: 2 })).toBe(requestHash({ b: 2, a: 1 }));
    expect(requestHash({ a: 1 })).not.toBe(requestHash({ a: '1' }));
  });
});
