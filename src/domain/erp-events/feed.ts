/**
 * The ERP events as a feed, for ERPs that cannot receive a webhook (behind NAT, on premises): they
 * pull `GET /api/erp-events?after=CURSOR` and acknowledge with `POST /api/erp-events/ack`. The feed
 * holds every event in one sequence (per order strictly in order); `event` is the exact body a push
 * carries. An acknowledged event counts as delivered, so the push outbox stops retrying it; an
 * event already pushed is acknowledged as a no-op.
 *
 * Cursors are opaque: the feed position signed with this database's own key, so a cursor from
 * another database, or a forged or altered one, is refused (400) instead of silently skipping or
 * repeating events.
 *
 * A restored copy of the database has the same key and id, so an ERP's saved cursor (handed out by
 * the original after the backup) is still accepted there. Positions therefore never fall below a
 * floor read off the clock: the copy's new events come above every position the original handed
 * out, provided the clock did not go back meanwhile. A cursor beyond what the clock allows (with a
 * little slack for the clocks of other instances) is refused rather than silently waiting for
 * positions that would come below it.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../types.js';
import type { FeedEntry } from '../../storage/contract.js';
import { AppError } from '../../platform/errors.js';
import type { WakeReason } from './feed-wake.js';

/** Longest a pull waits for a first event, seconds. */
export const FEED_MAX_WAIT_S = 30;
/** Most events per page. */
export const FEED_MAX_LIMIT = 500;
/**
 * Positions per millisecond of the clock floor: more events than this in one millisecond simply run
 * ahead of the floor. At 1000 the floor stays a safe integer until the year 2255.
 */
const POSITIONS_PER_MS = 1000;
/** How far ahead of this instance's clock a cursor may lie: another instance's clock may run a little ahead. */
export const FEED_CLOCK_SLACK_MS = 60_000;

/** The lowest position an event sequenced at `now` may get. */
export function feedClockFloor(now: Date): number {
  return now.getTime() * POSITIONS_PER_MS;
}

/** The highest position any copy of this database could have handed out by `now`. */
function feedCeiling(now: Date): number {
  return feedClockFloor(new Date(now.getTime() + FEED_CLOCK_SLACK_MS));
}

interface Identity {
  databaseId: string;
  cursorKey: string;
}

const identities = new WeakMap<object, Promise<Identity>>();

/** Made once with the database; read once per store. */
function identity(services: Deps<'store'>): Promise<Identity> {
  let id = identities.get(services.store);
  if (!id) {
    id = services.store.feed.identity();
    identities.set(services.store, id);
    id.catch(() => identities.delete(services.store));
  }
  return id;
}

function sign(id: Identity, body: string): string {
  return createHmac('sha256', Buffer.from(id.cursorKey, 'hex')).update(body).digest('base64url').slice(0, 22);
}

/** `position` as a cursor of this database. */
export function encodeFeedCursor(id: Identity, position: number): string {
  const body = `${id.databaseId}.${position}`;
  return `${Buffer.from(body).toString('base64url')}.${sign(id, body)}`;
}

/**
 * The position a cursor names; 400 for anything this database did not hand out, and for a position
 * above `ceiling`, which no copy of it could have handed out yet.
 */
export function decodeFeedCursor(id: Identity, cursor: string, field: string, ceiling: number): number {
  const bad = () =>
    new AppError('VALIDATION_FAILED', `${field} is not a cursor of this feed (another database's, or altered).`, {
      errors: [{ path: field, message: 'is not a cursor this feed handed out' }],
    });
  const m = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m) throw bad();
  const body = Buffer.from(m[1] ?? '', 'base64url').toString('utf8');
  const expected = Buffer.from(sign(id, body));
  const given = Buffer.from(m[2] ?? '');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad();
  const [db, pos] = body.split('.');
  if (db !== id.databaseId || pos === undefined || !/^\d{1,16}$/.test(pos)) throw bad();
  const position = Number(pos);
  if (!Number.isSafeInteger(position)) throw bad();
  if (position > ceiling) {
    throw new AppError(
      'VALIDATION_FAILED',
      `${field} names a feed position later than this server's clock allows: was the database restored on a machine whose clock is behind?`,
      {
        errors: [{ path: field, message: 'is later than any position this feed has handed out' }],
      },
    );
  }
  return position;
}

export interface FeedPage {
  /** Each event's cursor (acknowledge up to it) and its exact body. */
  data: Array<{ cursor: string; payload: string }>;
  /** Where the next pull starts: the last event's cursor, or the one given when nothing came. */
  nextCursor: string;
  /**
   * What ended the pull: `at_once` (events were there, or no wait was asked), `woken` (a commit's
   * word woke it), `polled` (its poll found them), `timeout` (nothing came), `aborted`.
   */
  answered: 'at_once' | WakeReason | 'timeout';
}

export interface FeedQuery {
  /** Absent: from the first event still kept. */
  after?: string;
  /** 1..500. */
  limit: number;
  /** 0..30 seconds to wait when nothing is there yet. */
  waitS: number;
}

const handedOutMarks = new WeakMap<object, number>();

/** Raises the handed-out mark when a page goes beyond it; a write only when it grows (as far as this process knows). */
async function noteHandedOut(services: Deps<'store'>, position: number): Promise<void> {
  if (position <= (handedOutMarks.get(services.store) ?? 0)) return;
  await services.store.feed.handedOut(position);
  handedOutMarks.set(services.store, Math.max(position, handedOutMarks.get(services.store) ?? 0));
}

/**
 * One page of the feed after `after`, waiting up to `waitS` for a first event. When `signal` aborts
 * (the client left, or the service shuts down) a waiting pull answers at once with what it has:
 * nothing, and the cursor it was given.
 */
export async function pullErpEvents(
  services: Deps<'store' | 'clock' | 'feed'>,
  q: FeedQuery,
  signal?: AbortSignal,
): Promise<FeedPage> {
  const id = await identity(services);
  const from = q.after === undefined ? 0 : decodeFeedCursor(id, q.after, 'after', feedCeiling(services.clock.now()));
  const deadline = Date.now() + Math.min(Math.max(q.waitS, 0), FEED_MAX_WAIT_S) * 1000;
  let entries: FeedEntry[];
  let answered: FeedPage['answered'] = 'at_once';
  for (;;) {
    // Read before looking: a commit between the look and the wait moves it, so the wait returns at once.
    const seen = services.feed.generation;
    await services.store.feed.sequence(feedClockFloor(services.clock.now()));
    entries = await services.store.feed.after(from, Math.min(Math.max(q.limit, 1), FEED_MAX_LIMIT));
    if (entries.length > 0) break;
    if (signal?.aborted) {
      answered = 'aborted';
      break;
    }
    if (Date.now() >= deadline) {
      if (answered !== 'at_once') answered = 'timeout';
      break;
    }
    answered = await services.feed.wait(seen, deadline - Date.now(), signal);
    if (answered === 'aborted') break;
  }
  const last = entries.at(-1);
  if (last) await noteHandedOut(services, last.position);
  const data = entries.map((e) => ({ cursor: encodeFeedCursor(id, e.position), payload: e.payload }));
  return { data, nextCursor: data.at(-1)?.cursor ?? encodeFeedCursor(id, from), answered };
}

/**
 * Every event up to `cursor` that a pull handed out counts as delivered; answers how many were not
 * delivered before. An acknowledgement is the ERP saying it holds those events, so it never covers
 * one no pull handed out: that one is still pushed (or pulled) like any other.
 */
export async function acknowledgeErpEvents(
  services: Deps<'store' | 'clock' | 'logger'>,
  cursor: string,
  by: string,
): Promise<number> {
  const id = await identity(services);
  const now = services.clock.now();
  const position = decodeFeedCursor(id, cursor, 'cursor', feedCeiling(now));
  const acked = await services.store.feed.acknowledge(position, now, by);
  if (acked > 0)
    services.logger.info({ feed_position: position, acknowledged: acked }, 'ERP events acknowledged by a puller');
  return acked;
}
