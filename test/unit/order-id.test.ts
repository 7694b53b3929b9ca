import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../../src/errors.js';
import { GATEWAY_ORDER_ID_MAX, deriveMercantId, gatewayOrderIdFor, newPaymentLinkId, sanitizeOrderId } from '../../src/domain/order-id.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof AppError ? err.code : 'not-an-AppError';
  }
}

describe('sanitizeOrderId', () => {
  it('replaces every character outside A-Za-z0-9-_~. with a dot', () => {
    expect(sanitizeOrderId('SO/2026:17')).toBe('SO.2026.17');
    expect(sanitizeOrderId('INV/2026/0042:2')).toBe('INV.2026.0042.2');
    expect(sanitizeOrderId('a-b_c~d.e')).toBe('a-b_c~d.e');
    expect(sanitizeOrderId('a b#c?d%e')).toBe('a.b.c.d.e');
    expect(sanitizeOrderId('ü💳Ａ')).toBe('...');
  });

  it('property: only allowed characters, one per input code point, allowed ones kept in place', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (s) => {
        const out = sanitizeOrderId(s);
        const points = Array.from(s);
        expect(out).toMatch(/^[A-Za-z0-9\-_~.]*$/);
        expect(out.length).toBe(points.length);
        points.forEach((c, i) => expect(out[i]).toBe(/^[A-Za-z0-9\-_~.]$/.test(c) ? c : '.'));
      }),
      { numRuns: 2000 },
    );
  });

  it('property: sanitizing is idempotent', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (s) => {
        expect(sanitizeOrderId(sanitizeOrderId(s))).toBe(sanitizeOrderId(s));
      }),
    );
  });
});

describe('deriveMercantId', () => {
  it('takes the part before the first colon of the ORIGINAL id, else the whole id', () => {
    expect(deriveMercantId('SO/2026:17')).toBe('SO/2026');
    expect(deriveMercantId('INV/2026/0042:2:x')).toBe('INV/2026/0042');
    expect(deriveMercantId('PLAIN-1')).toBe('PLAIN-1');
  });

  it('property: never looks at the sanitized id (the prefix keeps characters sanitizing would change)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }).filter((s) => !s.includes(':')), fc.string({ maxLength: 30 }), (prefix, rest) => {
        expect(deriveMercantId(`${prefix}:${rest}`)).toBe(prefix);
        expect(deriveMercantId(prefix)).toBe(prefix);
      }),
    );
  });
});

describe('gatewayOrderIdFor', () => {
  it('accepts up to 50 characters after sanitizing and refuses 51 with ORDER_ID_TOO_LONG', () => {
    expect(gatewayOrderIdFor('a'.repeat(GATEWAY_ORDER_ID_MAX))).toHaveLength(50);
    expect(codeOf(() => gatewayOrderIdFor('a'.repeat(51)))).toBe('ORDER_ID_TOO_LONG');
    // 25 emoji and a letter are 51 UTF-16 units but 26 gateway characters
    expect(gatewayOrderIdFor(`${'💳'.repeat(25)}A`)).toBe(`${'.'.repeat(25)}A`);
  });

  it('refuses empty, blank and control-character ids with ORDER_ID_INVALID', () => {
    for (const bad of ['', '   ', 'A\u0000B', 'A\nB', 'A\u007fB', 'A\u0085B', 'A\ud800B']) expect(codeOf(() => gatewayOrderIdFor(bad)), JSON.stringify(bad)).toBe('ORDER_ID_INVALID');
  });

  it('refuses ids a URL would resolve away ("." and "..") or without a mercant_id before the first ":"', () => {
    for (const bad of [':', '::', '.', '..', '/', '//', '💳', ':1', ' :2']) expect(codeOf(() => gatewayOrderIdFor(bad)), JSON.stringify(bad)).toBe('ORDER_ID_INVALID');
    expect(gatewayOrderIdFor('~')).toBe('~');
    expect(gatewayOrderIdFor('A:')).toBe('A.');
    expect(gatewayOrderIdFor('./a')).toBe('..a');
  });

  it('property: accepted ids map into the gateway charset with length ≤ 50', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 70 }), (s) => {
        const code = codeOf(() => gatewayOrderIdFor(s));
        if (code === undefined) expect(gatewayOrderIdFor(s)).toMatch(/^(?!\.+$)[A-Za-z0-9\-_~.]{1,50}$/);
        else expect(['ORDER_ID_INVALID', 'ORDER_ID_TOO_LONG']).toContain(code);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('newPaymentLinkId', () => {
  it('is 128 random bits in the gateway charset, never repeating', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newPaymentLinkId()));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^pl-[0-9a-f]{32}$/);
  });
});
