/**
 * Word between the instances on one PostgreSQL database that something was committed: LISTEN on
 * one connection of this store's own (outside the pool, so a pull never waits for a pooled
 * connection and the listener never holds one), NOTIFY on the same connection.
 *
 * - The connection opens on the first `listen` or `announce`; when it drops it is opened again after a pause that
 *   doubles up to 30 s. Until it is back, `live` is false and the waiters fall back to polling.
 * - Announcements are coalesced: one NOTIFY in flight at a time, and one more after it when
 *   announcements came meanwhile, so a burst of commits costs a few NOTIFYs, not one each.
 * - The channel names the schema, so deployments in two schemas of one database do not wake each
 *   other. A notification carries this store's id, so its own announcements do not wake it.
 * - Nothing here throws to the caller: a lost announcement costs a waiter one poll interval.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import type { CommitSignals, SignalTopic } from '../contract.js';
import type { PgConnection } from './tls.js';

const MAX_BACKOFF_MS = 30_000;

export interface PgSignalOptions {
  connection: PgConnection;
  /** The store's schema (tests); the connection's default otherwise. */
  schema?: string;
  logger?: Logger;
  /** First pause before a reconnect, ms (default 500). */
  retryMs?: number;
}

export function postgresSignals(o: PgSignalOptions): CommitSignals & { close(): Promise<void> } {
  const self = randomBytes(8).toString('hex');
  const channel = (topic: SignalTopic) => `paylink_${o.schema ?? 'public'}_${topic}`;
  const handlers = new Map<SignalTopic, Set<() => void>>();
  let client: pg.Client | undefined;
  let live = false;
  let closed = false;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let backoff = o.retryMs ?? 500;
  const inFlight = new Set<SignalTopic>();
  const again = new Set<SignalTopic>();

  const lost = (c: pg.Client, why: string) => {
    if (client !== c) return;
    client = undefined;
    live = false;
    c.removeAllListeners('notification');
    c.end().catch(() => undefined);
    if (closed) return;
    o.logger?.warn({ retry_ms: backoff }, `postgres listener lost (${why}); waiting pulls poll until it is back`);
    schedule();
  };

  const schedule = () => {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, backoff);
    retry.unref();
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };

  const connect = (): Promise<void> => {
    connecting ??= (async () => {
      const c = new pg.Client({
        connectionString: o.connection.connectionString,
        ssl: o.connection.ssl,
        connectionTimeoutMillis: 2_000,
        statement_timeout: 5_000,
        keepAlive: true,
      });
      c.on('error', (err) => lost(c, err.message));
      c.on('end', () => lost(c, 'connection ended'));
      c.on('notification', (n) => {
        if (n.payload === self) return;
        const topic = [...handlers.keys()].find((t) => channel(t) === n.channel);
        for (const fn of (topic && handlers.get(topic)) ?? []) fn();
      });
      try {
        await c.connect();
        client = c;
        for (const topic of handlers.keys()) await c.query(`listen ${channel(topic)}`);
        if (closed) return void (await c.end());
        live = true;
        backoff = o.retryMs ?? 500;
        // What was committed while nobody listened is found by the waiters' next read.
        for (const set of handlers.values()) for (const fn of set) fn();
        for (const topic of [...again]) {
          again.delete(topic);
          send(topic);
        }
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        if (client === c) return lost(c, why);
        c.end().catch(() => undefined);
        if (closed) return;
        o.logger?.warn(
          { retry_ms: backoff },
          `postgres listener cannot connect (${why}); waiting pulls poll meanwhile`,
        );
        schedule();
      }
    })().finally(() => (connecting = undefined));
    return connecting;
  };

  /** Opens the connection unless it is open, opening, or waiting to reconnect. */
  const start = (): void => {
    if (!client && !connecting && !retry && !closed) void connect();
  };

  const send = (topic: SignalTopic): void => {
    const c = client;
    if (!c || !live) return;
    inFlight.add(topic);
    c.query('select pg_notify($1, $2)', [channel(topic), self]).then(
      () => {
        inFlight.delete(topic);
        if (again.delete(topic)) send(topic);
      },
      () => {
        inFlight.delete(topic);
        again.delete(topic);
      },
    );
  };

  return {
    get live() {
      return live;
    },
    listen(topic, fn) {
      let set = handlers.get(topic);
      if (!set) {
        set = new Set();
        handlers.set(topic, set);
        // Once connected, a new topic is listened to here; before, the connect listens to every topic known.
        if (client) client.query(`listen ${channel(topic)}`).catch(() => undefined);
      }
      set.add(fn);
      start();
      return () => set.delete(fn);
    },
    announce(topic) {
      if (inFlight.has(topic) || !live) again.add(topic);
      else send(topic);
      start();
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await connecting?.catch(() => undefined);
      const c = client;
      client = undefined;
      live = false;
      await c?.end().catch(() => undefined);
    },
  };
}
