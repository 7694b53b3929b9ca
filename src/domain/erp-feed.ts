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
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../types.js';
import type { FeedEntry } from '../storage/store.js';
import { AppError } from '../errors.js';

/** Longest a pull waits for a first event, seconds. */
export const FEED_MAX_WAIT_S = 30;
/** Most events per page. */
export const FEED_MAX_LIMIT = 500;
/** How often a waiting pull looks again (other instances write events too). */
const POLL_MS = 200;

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

/** The position a cursor names; 400 for anything this database did not hand out. */
export function decodeFeedCursor(id: Identity, cursor: string, field: string): number {
  const bad = () => new AppError('VALIDATION_FAILED', `${field} is not a cursor of this feed (another database's, or altered).`, { errors: [{ path: field, message: 'is not a cursor this feed handed out' }] });
  const m = /^([A-Za-z0-9_-]{1,200})\.([A-Za-z0-9_-]{22})$/.exec(cursor);
  if (!m) throw bad();
  const body = Buffer.from(m[1] ?? '', 'base64url').toString('utf8');
  const expected = Buffer.from(sign(id, body));
  const given = Buffer.from(m[2] ?? '');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw bad();
  const [db, pos] = body.split('.');
  if (db !== id.databaseId || pos === undefined || !/^\d{1,15}$/.test(pos)) throw bad();
  return Number(pos);
}

export interface FeedPage {
  /** Each event's cursor (acknowledge up to it) and its exact body. */
  data: Array<{ cursor: string; payload: string }>;
  /** Where the next pull starts: the last event's cursor, or the one given when nothing came. */
  nextCursor: string;
}

export interface FeedQuery {
  /** Absent: from the first event still kept. */
  after?: string;
  /** 1..500. */
  limit: number;
  /** 0..30 seconds to wait when nothing is there yet. */
  waitS: number;
}

/** One page of the feed after `after`, waiting up to `waitS` for a first event. */
export async function pullErpEvents(services: Deps<'store'>, q: FeedQuery, signal?: AbortSignal): Promise<FeedPage> {
  const id = await identity(services);
  const from = q.after === undefined ? 0 : decodeFeedCursor(id, q.after, 'after');
  const deadline = Date.now() + Math.min(Math.max(q.waitS, 0), FEED_MAX_WAIT_S) * 1000;
  let entries: FeedEntry[];
  for (;;) {
    await services.store.feed.sequence();
    entries = await services.store.feed.after(from, Math.min(Math.max(q.limit, 1), FEED_MAX_LIMIT));
    if (entries.length > 0 || Date.now() >= deadline || signal?.aborted === true) break;
    await new Promise((r) => setTimeout(r, Math.min(POLL_MS, Math.max(deadline - Date.now(), 1))));
  }
  const data = entries.map((e) => ({ cursor: encodeFeedCursor(id, e.position), payload: e.payload }));
  return { data, nextCursor: data.at(-1)?.cursor ?? encodeFeedCursor(id, from) };
}

/** Every event up to `cursor` counts as delivered; answers how many were not delivered before. */
export async function acknowledgeErpEvents(services: Deps<'store' | 'clock' | 'logger'>, cursor: string, by: string): Promise<number> {
  const id = await identity(services);
  const position = decodeFeedCursor(id, cursor, 'cursor');
  const acked = await services.store.feed.acknowledge(position, services.clock.now(), by);
  if (acked > 0) services.logger.info({ feed_position: position, acknowledged: acked }, 'ERP events acknowledged by a puller');
  return acked;
}
