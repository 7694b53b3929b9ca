/** PostgreSQL's delivery-attempt completion: one statement, where a transaction of separate ones would take four round trips. */
import type { CompleteAttempt } from '../kysely/backend.js';
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
