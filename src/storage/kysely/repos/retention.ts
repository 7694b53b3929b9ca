import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import type { RetentionRepo } from '../../contract.js';

/** Notification results that are final: anything else (`received`, `unverified`) is still needed. */
const PROCESSED = ['applied', 'duplicate', 'stale', 'unknown_status', 'ignored', 'rechecked'] as const;

export class KyselyRetentionRepo implements RetentionRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** ERP events delivered before `before` (ISO), oldest first, with their delivery attempts; returns how many events. */
  async pruneDelivered(before: string, limit: number): Promise<number> {
    const rows = await this.db
      .selectFrom('outbox_events')
      .select('seq')
      .where('state', '=', 'delivered')
      .where('delivered_at', '<', before)
      .orderBy('delivered_at')
      .limit(limit)
      .execute();
    const seqs = rows.map((r) => Number(r.seq));
    if (seqs.length === 0) return 0;
    await this.db.deleteFrom('delivery_attempts').where('event_seq', 'in', seqs).execute();
    await this.db.deleteFrom('outbox_events').where('seq', 'in', seqs).execute();
    return seqs.length;
  }

  /** Gateway notifications processed and received before `before` (ISO); unverified ones stay for the reconciler. */
  async pruneNotifications(before: string, limit: number): Promise<number> {
    const rows = await this.db
      .selectFrom('notifications')
      .select('id')
      .where('received_at', '<', before)
      .where('result', 'in', PROCESSED)
      .orderBy('received_at')
      .limit(limit)
      .execute();
    const ids = rows.map((r) => Number(r.id));
    if (ids.length === 0) return 0;
    await this.db.deleteFrom('notifications').where('id', 'in', ids).execute();
    return ids.length;
  }

  /** Idempotency records expired at `now` (ISO): their keys are free again. */
  async pruneIdempotency(now: string, limit: number): Promise<number> {
    const res = await sql`delete from idempotency_records where (scope, idem_key) in (
      select scope, idem_key from idempotency_records where expires_at <= ${now} order by expires_at limit ${limit})`.execute(
      this.db,
    );
    return Number(res.numAffectedRows ?? 0);
  }
}
