/**
 * The pull feed as a writer of delivery facts: for any sequence of events written, pulls (from the
 * start, from any cursor handed out, any page size) and acknowledgements (of any cursor handed out,
 * of a signed position no pull reached, of an altered cursor), over the real store: every event gets
 * one position, positions handed out only grow, a pull never repeats or skips, and an
 * acknowledgement marks delivered exactly the events a pull handed out up to its cursor — never one
 * no pull handed out; an altered cursor is refused (400) and changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DATABASE_KINDS } from '../helpers/stores.js';
import { makeTestApp, type TestContext } from '../helpers/services.js';
import {
  acknowledgeErpEvents,
  decodeFeedCursor,
  encodeFeedCursor,
  pullErpEvents,
} from '../../src/domain/erp-events/feed.js';
import { AppError } from '../../src/platform/errors.js';

type Step =
  | { kind: 'write'; n: number }
  | { kind: 'pull'; from: number; limit: number }
  | { kind: 'ack'; of: number }
  | { kind: 'ack_unreached'; ahead: number }
  | { kind: 'ack_altered'; of: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('write' as const), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ kind: fc.constant('pull' as const), from: fc.nat(), limit: fc.integer({ min: 1, max: 5 }) }),
  fc.record({ kind: fc.constant('ack' as const), of: fc.nat() }),
  fc.record({ kind: fc.constant('ack_unreached' as const), ahead: fc.integer({ min: 1, max: 1000 }) }),
  fc.record({ kind: fc.constant('ack_altered' as const), of: fc.nat() }),
);

describe.each(DATABASE_KINDS)('the ERP pull feed, property (%s)', (kind) => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await makeTestApp(kind);
  });
  afterAll(async () => ctx.close());

  /** Every event of the feed: its outbox seq, feed position and state. */
  async function feedRows() {
    const rows = await ctx.store.db
      .selectFrom('outbox_events')
      .select(['seq', 'feed_seq', 'state'])
      .orderBy('seq')
      .execute();
    return rows.map((r) => ({
      seq: Number(r.seq),
      position: r.feed_seq === null ? null : Number(r.feed_seq),
      state: r.state,
    }));
  }

  it('positions only grow, a pull never repeats or skips, an acknowledgement covers only what a pull handed out', async () => {
    const identity = await ctx.store.feed.identity();
    const positionOf = (cursor: string) => decodeFeedCursor(identity, cursor, 'cursor', Number.MAX_SAFE_INTEGER);
    let order = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 16 }), async (steps) => {
        // Cursors handed out in this run: the start, then every event's and every page's.
        const cursors: string[] = [];
        // The mark earlier runs left: what a pull of this database has handed out so far.
        let handedOut = Number(
          (
            await ctx.store.db
              .selectFrom('feed_positions')
              .select('position')
              .where('name', '=', 'handed_out')
              .executeTakeFirst()
          )?.position ?? 0,
        );
        for (const s of steps) {
          if (s.kind === 'write') {
            for (let i = 0; i < s.n; i++) {
              const eventId = randomUUID();
              await ctx.store.outbox.enqueue({
                eventId,
                eventType: 'payment.status_changed',
                orderKey: `FEED-${++order}`,
                orderId: `FEED-${order}`,
                mercantId: 'FEED',
                statusVersion: 1,
                payload: JSON.stringify({ event_id: eventId }),
              });
            }
          } else if (s.kind === 'pull') {
            const after =
              s.from % (cursors.length + 1) === 0 ? undefined : cursors[(s.from % (cursors.length + 1)) - 1];
            const from = after === undefined ? 0 : positionOf(after);
            const page = await pullErpEvents(ctx.services, { after, limit: s.limit, waitS: 0 });
            const got = page.data.map((d) => positionOf(d.cursor));
            // In order, after the cursor, none repeated, none skipped: exactly the next positions there are.
            const there = (await feedRows())
              .map((r) => r.position)
              .filter((p): p is number => p !== null && p > from)
              .sort((a, b) => a - b)
              .slice(0, s.limit);
            expect(got).toEqual(there);
            const top = got.at(-1);
            if (top !== undefined) handedOut = Math.max(handedOut, top);
            cursors.push(...page.data.map((d) => d.cursor), page.nextCursor);
          } else if (s.kind === 'ack' || s.kind === 'ack_unreached') {
            const before = await feedRows();
            const position =
              s.kind === 'ack'
                ? cursors.length === 0
                  ? 0
                  : positionOf(cursors[s.of % cursors.length] ?? '')
                : Math.max(handedOut, ...before.map((r) => r.position ?? 0)) + s.ahead;
            const acked = await acknowledgeErpEvents(
              ctx.services,
              encodeFeedCursor(identity, position),
              'property-test',
            );
            const after = await feedRows();
            const covered = (p: number | null) => p !== null && p <= Math.min(position, handedOut);
            for (const [i, r] of after.entries()) {
              const was = before[i];
              if (covered(r.position)) expect(r.state).toBe('delivered');
              else expect(r.state).toBe(was?.state);
            }
            expect(acked).toBe(before.filter((r) => covered(r.position) && r.state !== 'delivered').length);
          } else {
            const before = await feedRows();
            const cursor =
              cursors.length === 0 ? encodeFeedCursor(identity, 0) : (cursors[s.of % cursors.length] ?? '');
            const last = cursor.at(-1) === 'A' ? 'B' : 'A';
            const altered = `${cursor.slice(0, -1)}${last}`;
            await expect(acknowledgeErpEvents(ctx.services, altered, 'property-test')).rejects.toSatisfy(
              (e) => e instanceof AppError && e.code === 'VALIDATION_FAILED',
            );
            expect(await feedRows()).toEqual(before);
          }
        }
        // Every event visible to a pull has one position, and positions follow the order events were written.
        await ctx.store.feed.sequence(0);
        const rows = await feedRows();
        const positions = rows.map((r) => r.position);
        expect(positions.every((p) => p !== null)).toBe(true);
        expect(new Set(positions).size).toBe(positions.length);
        expect([...positions].sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(positions);
        // Nothing no pull handed out is delivered.
        for (const r of rows) if ((r.position ?? 0) > handedOut) expect(r.state).not.toBe('delivered');
      }),
      { numRuns: 30 },
    );
  }, 60_000);
});
