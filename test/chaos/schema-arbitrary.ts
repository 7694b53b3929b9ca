/**
 * fast-check arbitraries from the service's own OpenAPI 3.1 (JSON Schema 2020-12) document:
 * `conforming` builds values the schema accepts (so requests get past validation and reach the
 * handlers), `hostile` mixes in what a careless or hostile client sends (wrong types, missing or
 * extra fields, control characters and NUL, boundary numbers, long strings).
 */
import fc from 'fast-check';

export type Json = Record<string, unknown>;
const MAX_DEPTH = 6;

export function resolve(schema: unknown, doc: Json): Json {
  let s = schema;
  for (let i = 0; i < 10 && s !== null && typeof s === 'object' && typeof (s as Json).$ref === 'string'; i++) {
    s = String((s as Json).$ref)
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (o, k) =>
          o !== null && typeof o === 'object' ? (o as Json)[k.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined,
        doc,
      );
  }
  return s !== null && typeof s === 'object' ? (s as Json) : {};
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Strings that break naive code: NUL and other controls, separators, traversal, markup, very long. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\r\n',
    'x\r\nSet-Cookie: a=b',
    '../../etc/passwd',
    '%00',
    '%2e%2e%2f',
    '<script>alert(1)</script>',
    "'; drop table transactions; --",
    '\ud800',
    '😀',
    '\u202e',
    'null',
    '-1',
    '1e309',
    '0x10',
    'ＡＢＣ',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(2_000, 70_000).map((n) => 'A'.repeat(n)),
);

function stringArb(s: Json): fc.Arbitrary<string> {
  const minLength = num(s.minLength) ?? 0;
  const maxLength = Math.max(minLength, Math.min(num(s.maxLength) ?? 64, 256));
  if (typeof s.pattern === 'string') {
    try {
      const re = new RegExp(s.pattern, 'u');
      return fc.stringMatching(re).filter((v) => v.length >= minLength && v.length <= maxLength);
    } catch {
      // a pattern JavaScript cannot compile: fall through to plain strings
    }
  }
  if (s.format === 'date-time')
    return fc
      .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString());
  if (s.format === 'uri') return fc.constantFrom('http://127.0.0.1:9/erp', 'https://127.0.0.1:9/x');
  return fc.string({ minLength, maxLength: Math.min(maxLength, 40) });
}

function numberArb(s: Json, integer: boolean): fc.Arbitrary<number> {
  const min = num(s.minimum) ?? (num(s.exclusiveMinimum) !== undefined ? Number(s.exclusiveMinimum) + 1 : -1_000_000);
  const max =
    num(s.maximum) ?? (num(s.exclusiveMaximum) !== undefined ? Number(s.exclusiveMaximum) - 1 : 1_000_000_000);
  if (!integer) return fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  const lo = Math.ceil(min);
  const hi = Math.floor(max);
  return fc.oneof(
    fc.constantFrom(lo, hi),
    lo >= -2_147_483_648 && hi <= 2_147_483_647
      ? fc.integer({ min: lo, max: hi })
      : fc.maxSafeInteger().filter((n) => n >= lo && n <= hi),
  );
}

export function conforming(schema: unknown, doc: Json, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if (depth > MAX_DEPTH) return fc.constant(null);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return fc.constantFrom(...(s.enum as unknown[]));
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = s[k];
    if (Array.isArray(alts) && alts.length > 0) return fc.oneof(...alts.map((a) => conforming(a, doc, depth + 1)));
  }
  if (Array.isArray(s.allOf) && s.allOf.length > 0)
    return conforming(Object.assign({}, ...s.allOf.map((a) => resolve(a, doc))), doc, depth + 1);
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((t) => conforming({ ...s, type: t }, doc, depth + 1)));
  switch (types[0]) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return numberArb(s, true);
    case 'number':
      return numberArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = num(s.minItems) ?? 0;
      return fc.array(conforming(s.items ?? {}, doc, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(num(s.maxItems) ?? 4, 4)),
      });
    }
    case 'object':
      return objectArb(s, doc, depth);
    default:
      return s.properties ? objectArb(s, doc, depth) : fc.jsonValue({ maxDepth: 2 });
  }
}

function objectArb(s: Json, doc: Json, depth: number): fc.Arbitrary<unknown> {
  const props = (s.properties ?? {}) as Record<string, unknown>;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, v] of Object.entries(props)) model[k] = conforming(v, doc, depth + 1);
  return fc.record(model, { requiredKeys: required.filter((k) => k in model) });
}

/** Mostly conforming, with hostile variants at every level: wrong types, missing required, extra fields, nasty strings. */
export function hostile(schema: unknown, doc: Json, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  const wrong = fc.oneof(
    nastyString,
    fc.constantFrom(null, true, -1, 0, 1e308, -1e308, 2 ** 53 + 1, 1.5, [], {}, [null], { a: { b: { c: 1 } } }),
  );
  if (depth > 3) return fc.oneof({ weight: 4, arbitrary: conforming(s, doc, depth) }, { weight: 1, arbitrary: wrong });
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type];
  if (types.includes('object') || s.properties) {
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [k, v] of Object.entries(props)) model[k] = hostile(v, doc, depth + 1);
    const required = Array.isArray(s.required) ? (s.required as string[]).filter((k) => k in model) : [];
    const base = fc.record(model, { requiredKeys: required });
    const withExtra = fc
      .tuple(base, fc.string({ maxLength: 12 }), wrong)
      .map(([o, k, v]) => ({ ...(o as Json), [k]: v }));
    return fc.oneof(
      { weight: 5, arbitrary: base },
      { weight: 1, arbitrary: withExtra },
      { weight: 1, arbitrary: wrong },
    );
  }
  if (types.includes('array'))
    return fc.oneof(
      { weight: 4, arbitrary: fc.array(hostile(s.items ?? {}, doc, depth + 1), { maxLength: 4 }) },
      { weight: 1, arbitrary: wrong },
      { weight: 1, arbitrary: fc.array(fc.constant(1), { minLength: 200, maxLength: 2000 }) },
    );
  return fc.oneof({ weight: 4, arbitrary: conforming(s, doc, depth) }, { weight: 1, arbitrary: wrong });
}
