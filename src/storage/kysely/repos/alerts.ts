import type { Kysely, Selectable } from 'kysely';
import type { Database, AlertsTable } from '../schema.js';
import { ALERT_KINDS, type AlertKind, type AlertRecord, type NewAlert } from '../../../model/alert.js';
import type { AlertsRepo } from '../../contract.js';
import { oneOf } from '../rows/literal.js';

function toAlert(r: Selectable<AlertsTable>): AlertRecord {
  let details: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(r.details);
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) details = v as Record<string, unknown>;
  } catch {
    // a row written by hand: shown without details
  }
  return {
    id: Number(r.id),
    account: r.account,
    alert: oneOf(ALERT_KINDS, r.alert, 'alerts.alert'),
    subject: r.subject,
    summary: r.summary,
    details,
    startedAt: r.started_at,
    resolvedAt: r.resolved_at,
  };
}

export class KyselyAlertsRepo implements AlertsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly account: string,
  ) {}

  async open(a: NewAlert, now: Date): Promise<AlertRecord | undefined> {
    // The partial unique index decides between instances: the second to open the same alert inserts nothing.
    const row = await this.db
      .insertInto('alerts')
      .values({
        account: this.account,
        alert: a.alert,
        subject: a.subject,
        summary: a.summary,
        details: JSON.stringify(a.details),
        started_at: now.toISOString(),
        resolved_at: null,
      })
      .onConflict((oc) => oc.columns(['account', 'alert', 'subject']).where('resolved_at', 'is', null).doNothing())
      .returningAll()
      .executeTakeFirst();
    return row ? toAlert(row) : undefined;
  }

  async resolve(alert: AlertKind, subject: string, now: Date): Promise<AlertRecord | undefined> {
    const row = await this.db
      .updateTable('alerts')
      .set({ resolved_at: now.toISOString() })
      .where('account', '=', this.account)
      .where('alert', '=', alert)
      .where('subject', '=', subject)
      .where('resolved_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    return row ? toAlert(row) : undefined;
  }

  async listOpen(account?: string): Promise<AlertRecord[]> {
    let q = this.db.selectFrom('alerts').selectAll().where('resolved_at', 'is', null);
    if (account) q = q.where('account', '=', account);
    return (await q.orderBy('id', 'asc').limit(500).execute()).map(toAlert);
  }

  async list(filter: { alert?: AlertKind; limit?: number }): Promise<AlertRecord[]> {
    let q = this.db.selectFrom('alerts').selectAll().where('account', '=', this.account);
    if (filter.alert) q = q.where('alert', '=', filter.alert);
    return (
      await q
        .orderBy('id', 'desc')
        .limit(Math.min(filter.limit ?? 100, 500))
        .execute()
    ).map(toAlert);
  }
}
