/**
 * The event reference of docs/erp-integration.md against the event's one schema (ErpEventSchema):
 * every field it carries is listed with its type and when it is present, nothing else is, and the
 * example event is one the schema accepts.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Value } from 'typebox/value';
import { ErpEventSchema } from '../../src/erp/events.js';
import { STATUS_MEANINGS } from '../../src/http/reference/guide.js';

const GUIDE = fs.readFileSync('docs/erp-integration.md', 'utf8');

type Prop = { type?: string; anyOf?: Array<{ type?: string }>; enum?: unknown[] };

/** The type column as the schema says it. */
function typeWords(p: Prop): string {
  if (p.anyOf) return p.anyOf.map((s) => s.type ?? '?').join(' or ');
  if (p.enum) return 'string';
  return p.type ?? '?';
}

function fieldTable(): Map<string, { type: string; when: string }> {
  const start = GUIDE.indexOf('#### Event fields');
  expect(start, 'the guide has an "Event fields" section').toBeGreaterThan(0);
  const rows = new Map<string, { type: string; when: string }>();
  for (const line of GUIDE.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const m = /^\| `([a-z_]+)` \| ([^|]+) \| ([^|]+) \|/.exec(line);
    if (m?.[1] && m[2] && m[3]) rows.set(m[1], { type: m[2].trim(), when: m[3].trim() });
  }
  return rows;
}

describe('the ERP event reference', () => {
  it('lists exactly the fields of the event schema, each with its type, and says which are always there', () => {
    const props = ErpEventSchema.properties as Record<string, Prop>;
    const required = new Set(ErpEventSchema.required as string[]);
    const table = fieldTable();
    expect([...table.keys()].sort()).toEqual(Object.keys(props).sort());
    for (const [name, row] of table) {
      const prop = props[name];
      expect(prop, name).toBeDefined();
      if (!prop) continue;
      expect(row.type, name).toBe(typeWords(prop));
      expect(row.when === 'always', `${name}: "${row.when}"`).toBe(required.has(name));
    }
    expect(table.has('expected_amount') && table.has('amount_mismatch')).toBe(true);
  });

  it('its example event is one the schema accepts, with the amount fields', () => {
    const m = /```json\n(\{ "type": "payment\.status_changed"[\s\S]*?\})\n```/.exec(GUIDE);
    expect(m?.[1]).toBeDefined();
    const example: unknown = JSON.parse(m?.[1] ?? '{}');
    expect([...Value.Errors(ErpEventSchema, example)].map((e) => e.message)).toEqual([]);
    expect(example).toMatchObject({ expected_amount: expect.any(Number), amount_mismatch: false });
  });

  it('the status tables (guide and /docs) promise no pending event for a new order', () => {
    const row = GUIDE.split('\n').find((l) => l.startsWith('| `pending` |')) ?? '';
    expect(row).toMatch(/never for a new order/);
    const meaning = STATUS_MEANINGS.find(([s]) => s === 'pending')?.[1] ?? '';
    expect(meaning).toMatch(/never for a new order/i);
    expect(meaning).not.toMatch(/^Created/);
  });

  it('says that mercant_id is spelled on purpose, and that other items for an active link answer 409', () => {
    expect(GUIDE).toMatch(/`mercant_id` is spelled that way on purpose/);
    expect(GUIDE).toMatch(
      /409 `ORDER_CONFLICT` \("An active link … with different items exists; deactivate it\s+first"\)/,
    );
  });
});
