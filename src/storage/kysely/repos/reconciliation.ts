import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, ReconciliationImportsTable, ReconciliationRowsTable } from '../schema.js';
import type { ReconciliationRepo } from '../../contract.js';
import type { TransactionRecord } from '../../../model/payment.js';
import type { Page } from '../../../model/page.js';
import {
  RECONCILIATION_RESULTS,
  type NewReconciliationRow,
  type ReconciliationCounts,
  type ReconciliationImport,
  type ReconciliationResult,
  type ReconciliationSource,
  type ReconciliationRow,
} from '../../../model/reconciliation.js';
import { toTransaction } from '../rows/transactions.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { oneOf } from '../rows/literal.js';

const MONEY_MOVED = ['paid', 'partially_refunded', 'refunded', 'chargeback'];
/** Row ids per fee-writing statement: a few seconds of PostgreSQL's time at most. */
const FEE_CHUNK = 5000;

function toImport(r: Selectable<ReconciliationImportsTable>): ReconciliationImport {
  return {
    id: r.id,
    account: r.account,
    fileSha256: r.file_sha256,
    state: r.state === 'done' ? 'done' : 'running',
    source: r.source === 'history_api' ? 'history_api' : 'file',
    rows: Number(r.rows),
    matched: Number(r.matched),
    missing_here: Number(r.missing_here),
    missing_at_gateway: Number(r.missing_at_gateway),
    amount_mismatch: Number(r.amount_mismatch),
    status_mismatch: Number(r.status_mismatch),
    transaction_mismatch: Number(r.transaction_mismatch),
    chargeback: Number(r.chargeback),
    coversFrom: r.covers_from,
    coversTo: r.covers_to,
    createdBy: r.created_by,
    createdAt: r.created_at,
    finishedAt: r.finished_at,
  };
}

const num = (v: number | null) => (v === null ? null : Number(v));

function toRow(r: Selectable<ReconciliationRowsTable>): ReconciliationRow {
  return {
    id: Number(r.id),
    importId: r.import_id,
    line: num(r.line),
    result: oneOf(RECONCILIATION_RESULTS, r.result, 'reconciliation_rows.result'),
    gatewayOrderId: r.gateway_order_id,
    orderId: r.order_id,
    transactionRef: r.transaction_ref,
    reportStatus: r.report_status,
    reportAmount: num(r.report_amount),
    feeAmount: num(r.fee_amount),
    netAmount: num(r.net_amount),
    paylinkStatus: r.paylink_status,
    paylinkAmount: num(r.paylink_amount),
    detail: r.detail,
  };
}

export class KyselyReconciliationRepo implements ReconciliationRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly now: () => Date,
    private readonly kind: 'sqlite' | 'postgres',
    private readonly account: string,
  ) {}

  async begin(i: { id: string; createdBy: string; now: Date; source?: ReconciliationSource }): Promise<void> {
    await this.db
      .insertInto('reconciliation_imports')
      .values({
        id: i.id,
        account: this.account,
        file_sha256: '',
        state: 'running',
        source: i.source ?? 'file',
        rows: 0,
        matched: 0,
        missing_here: 0,
        missing_at_gateway: 0,
        amount_mismatch: 0,
        status_mismatch: 0,
        transaction_mismatch: 0,
        chargeback: 0,
        covers_from: null,
        covers_to: null,
        created_by: i.createdBy,
        created_at: i.now.toISOString(),
        finished_at: null,
      })
      .execute();
  }

  async addRows(rows: NewReconciliationRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db
      .insertInto('reconciliation_rows')
      .values(
        rows.map((r) => ({
          import_id: r.importId,
          line: r.line,
          result: r.result,
          gateway_order_id: r.gatewayOrderId,
          order_id: r.orderId,
          transaction_ref: r.transactionRef,
          report_status: r.reportStatus,
          report_amount: r.reportAmount,
          fee_amount: r.feeAmount,
          net_amount: r.netAmount,
          paylink_status: r.paylinkStatus,
          paylink_amount: r.paylinkAmount,
          detail: r.detail,
          matched_nominal: r.matchedOn?.nominal ?? null,
          matched_paid_amount: r.matchedOn?.paidAmount ?? null,
        })),
      )
      .execute();
  }

  async missingAtGateway(
    importId: string,
    from: string,
    to: string,
    afterId: string,
    limit: number,
  ): Promise<TransactionRecord[]> {
    const rows = await this.db
      .selectFrom('transactions as t')
      .selectAll('t')
      .where('t.status', 'in', MONEY_MOVED)
      .where('t.account', '=', this.account)
      .where(sql<string>`coalesce(t.settlement_time, t.transaction_time)`, '>=', from)
      .where(sql<string>`coalesce(t.settlement_time, t.transaction_time)`, '<=', to)
      .where('t.id', '>', afterId)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('reconciliation_rows as r')
              .select('r.id')
              .whereRef('r.transaction_ref', '=', 't.id')
              .where('r.import_id', '=', importId),
          ),
        ),
      )
      .orderBy('t.id')
      .limit(limit)
      .execute();
    return rows.map(toTransaction);
  }

  async learnRows(): Promise<void> {
    // Without statistics of the rows just staged, PostgreSQL looks a payment's rows up through the
    // (import, result, id) index and the import's checks turn quadratic (a 300,000-row report would
    // outlast the statement timeout); SQLite's planner needs no statistics to pick the right index.
    if (this.kind === 'postgres') await sql`analyze reconciliation_rows`.execute(this.db);
  }

  async keepMatchedFees(importId: string): Promise<{ expected: number; written: number }> {
    const span = await this.db
      .selectFrom('reconciliation_rows')
      .select((eb) => [eb.fn.min('id').as('lo'), eb.fn.max('id').as('hi')])
      .where('import_id', '=', importId)
      .where('result', '=', 'matched')
      .executeTakeFirst();
    const total = { expected: 0, written: 0 };
    const [lo, hi] = [Number(span?.lo ?? 0), Number(span?.hi ?? -1)];
    // By ranges of row ids: one statement writing every payment of a large report would outlast
    // the PostgreSQL statement timeout.
    for (let from = lo; from <= hi; from += FEE_CHUNK) {
      const part = await this.keepFeesOf(importId, from, from + FEE_CHUNK);
      total.expected += part.expected;
      total.written += part.written;
    }
    return total;
  }

  /** The fees of the rows with ids in [from, to). */
  private async keepFeesOf(importId: string, from: number, to: number): Promise<{ expected: number; written: number }> {
    // The first matched row of each payment that gives a fee: a report listing a payment twice
    // writes the fee of its first line.
    const first = sql`r.import_id = ${importId} and r.result = 'matched' and r.fee_amount is not null and r.id >= ${from} and r.id < ${to}
      and not exists (select 1 from reconciliation_rows e where e.import_id = r.import_id and e.transaction_ref = r.transaction_ref and e.result = 'matched' and e.fee_amount is not null and e.id < r.id)`;
    const expected = await sql<{
      n: number | string;
    }>`select count(*) as n from reconciliation_rows r where ${first}`.execute(this.db);
    const written = await sql`
      update transactions set fee_amount = r.fee_amount, net_amount = r.net_amount, updated_at = ${this.now().toISOString()}
      from reconciliation_rows r
      where ${first}
        and transactions.id = r.transaction_ref
        and transactions.status = r.paylink_status
        and transactions.nominal = r.matched_nominal
        and (transactions.paid_amount = r.matched_paid_amount or (transactions.paid_amount is null and r.matched_paid_amount is null))`.execute(
      this.db,
    );
    return { expected: Number(expected.rows[0]?.n ?? 0), written: Number(written.numAffectedRows ?? 0n) };
  }

  async finish(
    id: string,
    fileSha256: string,
    counts: ReconciliationCounts,
    covers: { from: string | null; to: string | null },
    now: Date,
  ): Promise<boolean> {
    try {
      await this.db
        .updateTable('reconciliation_imports')
        .set({
          state: 'done',
          file_sha256: fileSha256,
          ...counts,
          covers_from: covers.from,
          covers_to: covers.to,
          finished_at: now.toISOString(),
        })
        .where('id', '=', id)
        .execute();
      return true;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE') return false;
      throw err;
    }
  }

  async discard(id: string): Promise<void> {
    await this.db.deleteFrom('reconciliation_rows').where('import_id', '=', id).execute();
    await this.db.deleteFrom('reconciliation_imports').where('id', '=', id).execute();
  }

  async findDoneByFile(fileSha256: string): Promise<ReconciliationImport | undefined> {
    const row = await this.db
      .selectFrom('reconciliation_imports')
      .selectAll()
      .where('file_sha256', '=', fileSha256)
      .where('account', '=', this.account)
      .where('state', '=', 'done')
      .executeTakeFirst();
    return row ? toImport(row) : undefined;
  }

  async get(id: string): Promise<ReconciliationImport | undefined> {
    const row = await this.db.selectFrom('reconciliation_imports').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toImport(row) : undefined;
  }

  async list(filter: { limit: number; cursor?: string }): Promise<Page<ReconciliationImport>> {
    let q = this.db.selectFrom('reconciliation_imports').selectAll().where('state', '=', 'done');
    const c = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    if (c)
      q = q.where((eb) =>
        eb.or([eb('created_at', '<', c.at), eb.and([eb('created_at', '=', c.at), eb('id', '<', c.id)])]),
      );
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .execute();
    const items = rows.slice(0, filter.limit).map(toImport);
    const last = items.at(-1);
    return rows.length > filter.limit && last
      ? { items, nextCursor: encodeCursor({ at: last.createdAt, id: last.id }) }
      : { items };
  }

  async rows(
    importId: string,
    filter: { result?: ReconciliationResult; limit: number; afterId?: number },
  ): Promise<ReconciliationRow[]> {
    let q = this.db.selectFrom('reconciliation_rows').selectAll().where('import_id', '=', importId);
    if (filter.result) q = q.where('result', '=', filter.result);
    if (filter.afterId !== undefined) q = q.where('id', '>', filter.afterId);
    const rows = await q.orderBy('id').limit(filter.limit).execute();
    return rows.map(toRow);
  }
}
