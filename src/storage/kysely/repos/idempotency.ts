import type { Kysely, Selectable } from 'kysely';
import type { Database, IdempotencyTable } from '../schema.js';
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyRepo } from '../../contract.js';

function toRecord(r: Selectable<IdempotencyTable>): IdempotencyRecord {
  return {
    scope: r.scope,
    key: r.idem_key,
    requestHash: r.request_hash,
    state: r.state === 'completed' ? 'completed' : 'in_flight',
    responseStatus: r.response_status === null ? null : Number(r.response_status),
    responseBody: r.response_body,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    lockedUntil: r.locked_until,
  };
}

/**
 * Claims are an insert-or-conflict, so exactly one of many concurrent requests (on any instance)
 * wins. The claim's `locked_until` doubles as its fencing token: a take-over always moves it forward,
 * so an owner that lost its lock cannot complete or release the new owner's record.
 */
export class KyselyIdempotencyRepo implements IdempotencyRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly account: string,
  ) {}

  async get(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('account', '=', this.account)
      .where('scope', '=', scope)
      .where('idem_key', '=', key)
      .executeTakeFirst();
    return row ? toRecord(row) : undefined;
  }

  async claim(
    scope: string,
    key: string,
    requestHash: string,
    o: { now: Date; retentionMs: number; lockMs: number },
  ): Promise<IdempotencyClaim> {
    const nowIso = o.now.toISOString();
    const token = new Date(o.now.getTime() + o.lockMs).toISOString();
    const fresh = {
      request_hash: requestHash,
      state: 'in_flight',
      response_status: null,
      response_body: null,
      created_at: nowIso,
      expires_at: new Date(o.now.getTime() + o.retentionMs).toISOString(),
      locked_until: token,
    };
    const res = await this.db
      .insertInto('idempotency_records')
      .values({ account: this.account, scope, idem_key: key, ...fresh })
      .onConflict((oc) => oc.columns(['account', 'scope', 'idem_key']).doNothing())
      .returning('idem_key')
      .executeTakeFirst();
    if (res) return { claimed: true, token };
    const existing = await this.get(scope, key);
    if (!existing) return this.claim(scope, key, requestHash, o);
    const expired = existing.expiresAt <= nowIso;
    const abandoned =
      existing.state === 'in_flight' && existing.requestHash === requestHash && (existing.lockedUntil ?? '') <= nowIso;
    if (!expired && !abandoned) return { claimed: false, record: existing };
    // Take over with compare-and-set: of several requests seeing the same stale row, one wins.
    const upd = await this.db
      .updateTable('idempotency_records')
      .set(fresh)
      .where('account', '=', this.account)
      .where('scope', '=', scope)
      .where('idem_key', '=', key)
      .where('expires_at', '=', existing.expiresAt)
      .where('state', '=', existing.state)
      .where('locked_until', existing.lockedUntil === null ? 'is' : '=', existing.lockedUntil)
      .executeTakeFirst();
    if (Number(upd.numUpdatedRows) === 1) return { claimed: true, token };
    const now = await this.get(scope, key);
    return now ? { claimed: false, record: now } : this.claim(scope, key, requestHash, o);
  }

  async complete(scope: string, key: string, token: string, status: number, body: string): Promise<boolean> {
    const res = await this.db
      .updateTable('idempotency_records')
      .set({ state: 'completed', response_status: status, response_body: body, locked_until: null })
      .where('account', '=', this.account)
      .where('scope', '=', scope)
      .where('idem_key', '=', key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '=', token)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async release(scope: string, key: string, token: string): Promise<boolean> {
    const res = await this.db
      .deleteFrom('idempotency_records')
      .where('account', '=', this.account)
      .where('scope', '=', scope)
      .where('idem_key', '=', key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '=', token)
      .executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }

  async pruneExpired(now: Date): Promise<number> {
    const res = await this.db
      .deleteFrom('idempotency_records')
      .where('expires_at', '<=', now.toISOString())
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
