import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AppError } from '../../src/platform/errors.js';
import {
  GATEWAY_ORDER_ID_MAX,
  assertPrintableId,
  deriveMercantId,
  gatewayOrderIdFor,
  newPaymentLinkId,
  sanitizeOrderId,
} from '../../src/domain/orders/ids.js';

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
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (s) => {
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
      fc.property(
        fc.string({ maxLength: 30 }).filter((s) => !s.includes(':')),
        fc.string({ maxLength: 30 }),
        (prefix, rest) => {
          expect(deriveMercantId(`${prefix}:${rest}`)).toBe(prefix);
          expect(deriveMercantId(prefix)).toBe(prefix);
        },
      ),
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
    for (const bad of ['', '   ', 'A\u0000B', 'A\nB', 'A\u007fB', 'A\u0085B', 'A\ud800B'])
      expect(
        codeOf(() => gatewayOrderIdFor(bad)),
        JSON.stringify(bad),
      ).toBe('ORDER_ID_INVALID');
  });

  it('refuses bidirectional controls and invisible characters with ORDER_ID_INVALID, naming the code point and its place', () => {
    const named = [
      '\u061c',
      '\u200e',
      '\u200f',
      '\u202a',
      '\u202b',
      '\u202c',
      '\u202d',
      '\u202e',
      '\u2066',
      '\u2067',
      '\u2068',
      '\u2069',
      '\u200b',
      '\u200c',
      '\u200d',
      '\u2060',
      '\ufeff',
      '\u00ad',
    ];
    const others = [
      '\u2061',
      '\u2064',
      '\u206f',
      '\u180e',
      '\u0600',
      '\u06dd',
      '\ufff9',
      '\u{e0001}',
      '\u{e0041}',
      '\u034f',
      '\ufe0f',
      '\u3164',
      '\u115f',
      '\u2028',
      '\u2029',
      '\u{1d173}',
    ];
    for (const c of [...named, ...others]) {
      for (const id of [`SO${c}-1`, `${c}SO-1`, `SO-1${c}`, `INV/2026${c}:1`]) {
        expect(
          codeOf(() => gatewayOrderIdFor(id)),
          JSON.stringify(id),
        ).toBe('ORDER_ID_INVALID');
      }
    }
    expect(() => gatewayOrderIdFor('INV-\u202e1:2')).toThrow(
      'order_id contains an invisible or text-direction character (U+202E at character 5); such characters make one id look like another.',
    );
    expect(codeOf(() => assertPrintableId('INV\u200b2026', 'mercant_id'))).toBe('ORDER_ID_INVALID');
  });

  it('property: any format (Cf) character anywhere in an otherwise good id is refused; visible non-ASCII text is not', () => {
    const everyCf = Array.from({ length: 0x110000 }, (_, n) => n)
      .filter((n) => n < 0xd800 || n > 0xdfff)
      .map((n) => String.fromCodePoint(n))
      .filter((c) => /\p{Cf}/u.test(c));
    expect(everyCf.length).toBeGreaterThan(150);
    const cf = fc.constantFrom(...everyCf);
    const good = fc.stringMatching(/^[A-Za-z0-9/:-]{1,20}$/).filter((s) => /^[A-Za-z0-9]/.test(s));
    fc.assert(
      fc.property(good, cf, fc.nat(), (id, c, i) => {
        const points = Array.from(id);
        const at = i % (points.length + 1);
        expect(codeOf(() => gatewayOrderIdFor([...points.slice(0, at), c, ...points.slice(at)].join('')))).toBe(
          'ORDER_ID_INVALID',
        );
        expect(codeOf(() => gatewayOrderIdFor(id))).toBeUndefined();
      }),
      { numRuns: 2000 },
    );
    for (const visible of ['INV/2026/Ä:1', 'Заказ-7', '注文-1', 'SO 1', 'SO\u00a01', '💳-1'])
      expect(
        codeOf(() => gatewayOrderIdFor(visible)),
        visible,
      ).toBeUndefined();
  });

  it('refuses ids a URL would resolve away ("." and "..") or without a mercant_id before the first ":"', () => {
    for (const bad of [':', '::', '.', '..', '/', '//', '💳', ':1', ' :2'])
      expect(
        codeOf(() => gatewayOrderIdFor(bad)),
        JSON.stringify(bad),
      ).toBe('ORDER_ID_INVALID');
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
