/**
 * SQLite's delivery-attempt completion: the fenced update and the attempt record as two statements
 * in one transaction (the caller's, or one of its own); several events' in one transaction, one
 * after another, as each alone.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../kysely/schema.js';
import type { CompleteAttempt, CompleteAttempts } from '../kysely/backend.js';
import { Precompiled } from '../kysely/precompiled.js';

const FENCED_UPDATE = new Precompiled<{ attempts: number }>(`
  update outbox_events set state = ?, attempts = attempts + 1, next_attempt_at = ?, lease_owner = null,
    lease_until = null, last_status_code = ?, last_error = ?, updated_at = ?, delivered_at = ?
  where seq = ? and lease_token = ? and state in ('pending', 'failed')
  returning attempts`);

const ATTEMPTS = new Precompiled<{ attempts: number }>('select attempts from outbox_events where seq = ?');

const RECORD_ATTEMPT = new Precompiled<never>(`
  insert into delivery_attempts (event_seq, attempt_no, started_at, status_code, latency_ms, error, outcome, instance)
  values (?, ?, ?, ?, ?, ?, ?, ?)`);

export const sqliteCompleteAttempt: CompleteAttempt = async (db, at, { seq, leaseToken, instance, result: r }) => {
  const run = async (trx: Kysely<Database>): Promise<boolean> => {
    const res = await FENCED_UPDATE.first(trx, 'sqlite', [
      r.state,
      r.nextAttemptAt ?? at,
      r.statusCode,
      r.error,
      at,
      r.state === 'delivered' ? at : null,
      seq,
      leaseToken,
    ]);
    const attempts = res ? Number(res.attempts) : Number((await ATTEMPTS.first(trx, 'sqlite', [seq]))?.attempts ?? 0);
    await RECORD_ATTEMPT.run(trx, 'sqlite', [
      seq,
      res ? attempts : attempts + 1,
      r.startedAt,
      r.statusCode,
      r.latencyMs,
      r.error,
      res ? r.state : 'rejected_stale_lease',
      instance,
    ]);
    return res !== undefined;
  };
  return db.isTransaction ? run(db) : db.transaction().execute((trx) => run(trx));
};

export const sqliteCompleteAttempts: CompleteAttempts = async (db, at, instance, items) => {
  const run = async (trx: Kysely<Database>): Promise<boolean[]> => {
    const kept: boolean[] = [];
    for (const c of items) kept.push(await sqliteCompleteAttempt(trx, at, { ...c, instance }));
    return kept;
  };
  return db.isTransaction ? run(db) : db.transaction().execute((trx) => run(trx));
};
