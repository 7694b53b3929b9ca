/** PostgreSQL's delivery-attempt completion: one statement, where a transaction of separate ones would take four round trips. */
import type { CompleteAttempt, CompleteAttempts } from '../kysely/backend.js';
import { Precompiled } from '../kysely/precompiled.js';

/**
 * The fenced update and the attempt record in one statement. Every part of a statement sees the
 * same snapshot, so a lost lease records `attempts + 1` of the row as it was. (A data-modifying
 * part of a WITH runs whether or not anything reads it.)
 */
const COMPLETE = new Precompiled<{ kept: boolean }>(`
  with u as (
    update outbox_events set state = ?, attempts = attempts + 1, next_attempt_at = ?,
      lease_owner = null, lease_until = null, last_status_code = ?::integer, last_error = ?,
      updated_at = ?, delivered_at = ?
    where seq = ? and lease_token = ? and state in ('pending', 'failed')
    returning attempts
  ), a as (
    insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
    select ?::bigint, coalesce((select attempts from u), (select attempts + 1 from outbox_events where seq = ?), 1),
      ?, ?::integer, ?::integer, ?::text,
      case when exists (select 1 from u) then ?::text else 'rejected_stale_lease' end, ?::text
  )
  select exists (select 1 from u) as kept`);

export const postgresCompleteAttempt: CompleteAttempt = async (db, at, { seq, leaseToken, instance, result: r }) => {
  const row = await COMPLETE.first(db, 'postgres', [
    r.state,
    r.nextAttemptAt ?? at,
    r.statusCode,
    r.error,
    at,
    r.state === 'delivered' ? at : null,
    seq,
    leaseToken,
    seq,
    seq,
    r.startedAt,
    r.statusCode,
    r.latencyMs,
    r.error,
    r.state,
    instance,
  ]);
  return row?.kept === true;
};

/**
 * `COMPLETE` for several events: their values as arrays, one row each (`unnest`), the same fenced
 * update and attempt record per row. `o` is the rows as the statement found them (one snapshot):
 * a lost lease records `attempts + 1` of its row as it was.
 */
const COMPLETE_MANY = new Precompiled<{ seq: string | number }>(`
  with v as (
    select * from unnest(?::bigint[], ?::integer[], ?::text[], ?::text[], ?::integer[], ?::text[], ?::text[],
      ?::text[], ?::integer[])
      as v(seq, token, state, next_at, status_code, error, delivered_at, started_at, latency_ms)
  ), u as (
    update outbox_events e set state = v.state, attempts = e.attempts + 1, next_attempt_at = v.next_at,
      lease_owner = null, lease_until = null, last_status_code = v.status_code, last_error = v.error,
      updated_at = ?, delivered_at = v.delivered_at
    from v
    where e.seq = v.seq and e.lease_token = v.token and e.state in ('pending', 'failed')
    returning e.seq, e.attempts
  ), a as (
    insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
    select v.seq, coalesce(u.attempts, o.attempts + 1, 1), v.started_at, v.status_code, v.latency_ms, v.error,
      case when u.seq is not null then v.state else 'rejected_stale_lease' end, ?::text
    from v left join u on u.seq = v.seq left join outbox_events o on o.seq = v.seq
  )
  select seq from u`);

export const postgresCompleteAttempts: CompleteAttempts = async (db, at, instance, items) => {
  const col = <T>(f: (c: (typeof items)[number]) => T): T[] => items.map(f);
  const res = await COMPLETE_MANY.run(db, 'postgres', [
    col((c) => c.seq),
    col((c) => c.leaseToken),
    col((c) => c.result.state),
    col((c) => c.result.nextAttemptAt ?? at),
    col((c) => c.result.statusCode),
    col((c) => c.result.error),
    col((c) => (c.result.state === 'delivered' ? at : null)),
    col((c) => c.result.startedAt),
    col((c) => c.result.latencyMs),
    at,
    instance,
  ]);
  const kept = new Set(res.rows.map((r) => Number(r.seq)));
  return items.map((c) => kept.has(c.seq));
};
