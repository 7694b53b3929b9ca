/** PostgreSQL's delivery-attempt completion: one statement, where a transaction of separate ones would take four round trips. */
import { sql } from 'kysely';
import type { CompleteAttempt } from '../kysely/backend.js';

/**
 * The fenced update and the attempt record in one statement. Every part of a statement sees the
 * same snapshot, so a lost lease records `attempts + 1` of the row as it was. (A data-modifying
 * part of a WITH runs whether or not anything reads it.)
 */
export const postgresCompleteAttempt: CompleteAttempt = async (db, at, { seq, leaseToken, instance, result: r }) => {
  const result = await sql<{ kept: boolean }>`
    with u as (
      update outbox_events set state = ${r.state}, attempts = attempts + 1, next_attempt_at = ${r.nextAttemptAt ?? at},
        lease_owner = null, lease_until = null, last_status_code = ${r.statusCode}::integer, last_error = ${r.error},
        updated_at = ${at}, delivered_at = ${r.state === 'delivered' ? at : null}
      where seq = ${seq} and lease_token = ${leaseToken} and state in ('pending', 'failed')
      returning attempts
    ), a as (
      insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
      select ${seq}::bigint, coalesce((select attempts from u), (select attempts + 1 from outbox_events where seq = ${seq}), 1),
        ${r.startedAt}, ${r.statusCode}::integer, ${r.latencyMs}::integer, ${r.error}::text,
        case when exists (select 1 from u) then ${r.state}::text else 'rejected_stale_lease' end, ${instance}::text
    )
    select exists (select 1 from u) as kept`.execute(db);
  return result.rows[0]?.kept === true;
};
