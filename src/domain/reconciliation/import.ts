/**
 * Importing a report exported from the gateway's dashboard: read as it streams in (a 50 MB file is
 * never held whole), every row matched with the payment paylink holds and kept with its result,
 * then the payments paylink holds as paid on the report's days that the report does not list. The
 * same file again (by the hash of its bytes) is the first import, unchanged.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { parse, CsvError } from 'csv-parse';
import type { Deps } from '../../types.js';
import type { TransactionRecord } from '../../model/payment.js';
import type { NewReconciliationRow, ReconciliationCounts, ReconciliationImport, ReportRow } from '../../model/reconciliation.js';
import { AppError } from '../../errors.js';
import { isPurchaseOf } from '../../gateway/wire.js';
import { locateColumns, parseColumnMapping, readRow, type ColumnIndex } from './columns.js';
import { matchRow } from './match.js';
import { jakartaDay } from '../../time.js';

export type ImportDeps = Deps<'store' | 'clock' | 'logger'>;

/** Largest file taken, bytes: a month of a busy merchant's transactions is a few tens of MB. */
export const MAX_REPORT_BYTES = 64 * 1024 * 1024;
const BATCH = 500;

export interface ImportRequest {
  body: Readable;
  /** `field:Header,…` or a JSON object, for layouts other than the dashboard's. */
  columns?: string;
  /** The days (YYYY-MM-DD, Jakarta) the report covers, when the file's own dates should not decide. */
  from?: string;
  to?: string;
  actor: string;
}

export interface ImportOutcome {
  /** False: this file was imported before; `import` is that first import. */
  created: boolean;
  import: ReconciliationImport;
}

const emptyCounts = (): ReconciliationCounts => ({ rows: 0, matched: 0, missing_here: 0, missing_at_gateway: 0, amount_mismatch: 0, status_mismatch: 0 });

export async function importGatewayReport(services: ImportDeps, req: ImportRequest): Promise<ImportOutcome> {
  const mapping = parseColumnMapping(req.columns);
  const explicit = coversParam(req.from, req.to);
  const id = randomUUID();
  await services.store.reconciliation.begin({ id, createdBy: req.actor, now: services.clock.now() });
  try {
    const run = new ImportRun(services, id);
    const sha = await run.readAll(req.body, mapping);
    const earlier = await services.store.reconciliation.findDoneByFile(sha);
    if (earlier) {
      await services.store.reconciliation.discard(id);
      return { created: false, import: earlier };
    }
    const covers = explicit ?? run.covers();
    if (covers.from !== null && covers.to !== null) await run.findMissingAtGateway(covers.from, covers.to);
    if (!(await services.store.reconciliation.finish(id, sha, run.counts, covers, services.clock.now()))) {
      await services.store.reconciliation.discard(id);
      const first = await services.store.reconciliation.findDoneByFile(sha);
      if (first) return { created: false, import: first };
      throw new Error('reconciliation import: finishing failed without an earlier import');
    }
    const done = await services.store.reconciliation.get(id);
    if (!done) throw new Error('reconciliation import vanished');
    run.log(done);
    return { created: true, import: done };
  } catch (err) {
    await services.store.reconciliation.discard(id).catch(() => undefined);
    throw err;
  }
}

function coversParam(from: string | undefined, to: string | undefined): { from: string; to: string } | undefined {
  if (from === undefined && to === undefined) return undefined;
  const day = /^\d{4}-\d{2}-\d{2}$/;
  if (from === undefined || to === undefined || !day.test(from) || !day.test(to) || from > to) {
    throw new AppError('VALIDATION_FAILED', 'from and to go together, as YYYY-MM-DD with from ≤ to.', { errors: [{ path: 'from', message: 'must be YYYY-MM-DD, with to, from ≤ to' }] });
  }
  return { from, to };
}

class ImportRun {
  readonly counts = emptyCounts();
  private header: string[] = [];
  private index: ColumnIndex = {};
  private batch: ReportRow[] = [];
  private firstDay: string | null = null;
  private lastDay: string | null = null;

  constructor(
    private readonly services: ImportDeps,
    private readonly id: string,
  ) {}

  /** Reads, parses and matches the whole file; the SHA-256 of its bytes. */
  async readAll(body: Readable, mapping: ReturnType<typeof parseColumnMapping>): Promise<string> {
    const hash = createHash('sha256');
    let bytes = 0;
    body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_REPORT_BYTES) body.destroy(new AppError('PAYLOAD_TOO_LARGE', `The report exceeds ${MAX_REPORT_BYTES / 1024 / 1024} MB; export fewer days at a time.`));
      hash.update(chunk);
    });
    const parser = body.pipe(parse({ bom: true, info: true, delimiter: [',', ';', '\t'], skip_empty_lines: true, relax_column_count: true, max_record_size: 64 * 1024 }));
    body.once('error', (err) => parser.destroy(err));
    try {
      for await (const rec of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        const line = rec.info.lines;
        if (this.header.length === 0) {
          this.header = rec.record;
          this.index = locateColumns(this.header, mapping);
          continue;
        }
        this.batch.push(readRow(rec.record, line, this.index, this.header));
        if (this.batch.length >= BATCH) await this.flush();
      }
    } catch (err) {
      if (err instanceof CsvError) throw csvProblem(err);
      throw err;
    }
    if (this.header.length === 0) throw new AppError('VALIDATION_FAILED', 'The report is empty: it needs a header line and rows.', { errors: [{ path: 'line 1', message: 'no header line' }] });
    await this.flush();
    return hash.digest('hex');
  }

  /** The days the report's own dates cover (Jakarta). */
  covers(): { from: string | null; to: string | null } {
    return { from: this.firstDay, to: this.lastDay };
  }

  private async flush(): Promise<void> {
    const rows = this.batch;
    this.batch = [];
    if (rows.length === 0) return;
    const found = await this.resolve(rows);
    const out: NewReconciliationRow[] = [];
    for (const row of rows) {
      const tx = found.get(row.orderId);
      const v = matchRow(row, tx);
      this.counts.rows++;
      this.counts[v.result]++;
      const day = row.settlementTime ?? row.transactionTime;
      if (day) this.noteDay(jakartaDay(day));
      if (tx && v.result !== 'missing_here' && (row.fee !== null || row.net !== null)) await this.keepFee(tx, row);
      out.push({
        importId: this.id,
        line: row.line,
        result: v.result,
        gatewayOrderId: row.orderId,
        orderId: tx?.orderId ?? null,
        transactionRef: tx?.id ?? null,
        reportStatus: row.status,
        reportAmount: row.amount,
        feeAmount: row.fee,
        netAmount: row.net ?? (row.fee !== null ? row.amount - row.fee : null),
        paylinkStatus: v.paylinkStatus,
        paylinkAmount: v.paylinkAmount,
        detail: v.detail,
      });
    }
    await this.services.store.reconciliation.addRows(out);
    if (this.counts.rows % 10_000 < rows.length) this.services.logger.info({ reconciliation_import: this.id, rows: this.counts.rows }, 'reconciliation import: rows read');
  }

  private noteDay(day: string): void {
    if (this.firstDay === null || day < this.firstDay) this.firstDay = day;
    if (this.lastDay === null || day > this.lastDay) this.lastDay = day;
  }

  /** The payment of each row: by the gateway order id, a payment link's purchase, or the gateway's transaction id. */
  private async resolve(rows: ReportRow[]): Promise<Map<string, TransactionRecord>> {
    const t = this.services.store.transactions;
    const ids = [...new Set(rows.map((r) => r.orderId))];
    const byId = new Map((await t.findManyByGatewayOrderIds(ids)).map((x) => [x.gatewayOrderId, x]));
    const bases = new Map<string, string>();
    for (const id of ids.filter((i) => !byId.has(i))) for (const base of purchaseBases(id)) bases.set(base, id);
    if (bases.size > 0) for (const link of await t.findManyByGatewayOrderIds([...bases.keys()])) if (link.kind === 'payment_link') for (const id of ids) if (!byId.has(id) && isPurchaseOf(id, link.gatewayOrderId)) byId.set(id, link);
    for (const r of rows) {
      if (byId.has(r.orderId) || r.transactionId === null) continue;
      const tx = await t.findByGatewayTransactionId(r.transactionId);
      if (tx) byId.set(r.orderId, tx);
    }
    return byId;
  }

  /** The report's fee and net are the only source of them: kept on the payment. */
  private async keepFee(tx: TransactionRecord, row: ReportRow): Promise<void> {
    const fee = row.fee ?? tx.feeAmount;
    const net = row.net ?? (row.fee !== null ? row.amount - row.fee : tx.netAmount);
    if (fee === tx.feeAmount && net === tx.netAmount) return;
    await this.services.store.transactions.update(tx.id, { feeAmount: fee, netAmount: net });
  }

  /** Payments paylink holds as paid on the report's days that no row matched. */
  async findMissingAtGateway(fromDay: string, toDay: string): Promise<void> {
    let after = '';
    for (;;) {
      const page = await this.services.store.reconciliation.missingAtGateway(this.id, `${fromDay}T00:00:00+07:00`, `${toDay}T23:59:59+07:00`, after, BATCH);
      if (page.length === 0) return;
      this.counts.missing_at_gateway += page.length;
      await this.services.store.reconciliation.addRows(
        page.map((tx) => ({
          importId: this.id,
          line: null,
          result: 'missing_at_gateway',
          gatewayOrderId: tx.gatewayOrderId,
          orderId: tx.orderId,
          transactionRef: tx.id,
          reportStatus: null,
          reportAmount: null,
          feeAmount: null,
          netAmount: null,
          paylinkStatus: tx.status,
          paylinkAmount: tx.paidAmount ?? tx.nominal,
          detail: `paylink holds it as ${tx.status}; the report, covering ${fromDay} to ${toDay}, does not list it`,
        })),
      );
      after = page.at(-1)?.id ?? after;
    }
  }

  log(done: ReconciliationImport): void {
    const exceptions = done.missing_here + done.missing_at_gateway + done.amount_mismatch + done.status_mismatch;
    const line = { reconciliation_import: done.id, rows: done.rows, matched: done.matched, missing_here: done.missing_here, missing_at_gateway: done.missing_at_gateway, amount_mismatch: done.amount_mismatch, status_mismatch: done.status_mismatch };
    if (exceptions > 0) this.services.logger.warn({ ...line, alert: 'reconciliation_mismatch' }, 'reconciliation import: the gateway report and paylink differ');
    else this.services.logger.info(line, 'reconciliation import: every row matched');
  }
}

/** A purchase on a payment link is `<link order id>-<suffix>`: the ids it may extend. */
function purchaseBases(id: string): string[] {
  const out: string[] = [];
  let i = id.lastIndexOf('-');
  for (let tries = 0; i > 0 && tries < 4; tries++) {
    out.push(id.slice(0, i));
    i = id.lastIndexOf('-', i - 1);
  }
  return out;
}

/** A file that is not CSV: the line (and field) where reading stopped. */
function csvProblem(err: CsvError): AppError {
  const lines = typeof err.lines === 'number' ? err.lines : undefined;
  const column = typeof err.index === 'number' ? err.index + 1 : typeof err.column === 'number' ? err.column + 1 : undefined;
  const where = `${lines !== undefined ? `Line ${lines}` : 'The file'}${column !== undefined ? `, column ${column}` : ''}`;
  return new AppError('VALIDATION_FAILED', `${where}: ${err.message.replace(/^[A-Za-z ]+: /, '')}`, { errors: [{ path: where.toLowerCase(), message: err.code }] });
}
