/**
 * Reading the gateway's dashboard export: columns are found by their header, never their position
 * (the gateway adds columns and lets the merchant choose them), under the names its dashboard uses;
 * a mapping names them for other layouts. Cells are read strictly: a value that cannot be read is a
 * 400 naming its line and column, never a guess.
 */
import { AppError } from '../../errors.js';
import type { ReportRow } from '../../model/reconciliation.js';

export const REPORT_FIELDS = ['order_id', 'transaction_id', 'status', 'amount', 'fee', 'net', 'original_amount', 'payment_type', 'transaction_time', 'settlement_time'] as const;
export type ReportField = (typeof REPORT_FIELDS)[number];
const REQUIRED: readonly ReportField[] = ['order_id', 'status', 'amount'];

/** The headers the dashboard's exports use for each field (compared without case, spaces or punctuation). */
const KNOWN_HEADERS: Record<ReportField, readonly string[]> = {
  order_id: ['Order ID', 'order_id', 'OrderID', 'Merchant Order ID'],
  transaction_id: ['Transaction ID', 'transaction_id', 'Reference No', 'referenceNo'],
  status: ['Transaction Status', 'Transaction status', 'Status', 'transaction_status'],
  amount: ['Amount', 'Gross Amount', 'Transaction Amount', 'gross_amount', 'Amount (Gross)'],
  fee: ['Fee', 'Mdr amount', 'MDR Amount', 'Total Fee', 'fee', 'fee_amount'],
  net: ['Net', 'Net Amount', 'Amount (Net)', 'Payable (Nett)', 'net_amount'],
  original_amount: ['Promo Original Amount', 'Promo original amount', 'Original Amount', 'original_amount'],
  payment_type: ['Payment Type', 'Payment type', 'Payment Method', 'Channel', 'payment_type'],
  transaction_time: ['Transaction Time', 'Transaction time', 'Transaction Date', 'Date & Time', 'transaction_time'],
  settlement_time: ['Settlement Time', 'Settlement time', 'Settlement Date', 'settlement_time'],
};

const norm = (h: string) => h.replace(/^\uFEFF/, '').toLowerCase().replace(/[^a-z0-9]/g, '');

/** `field:Header,field:Header` or a JSON object `{ "field": "Header" }`; the fields not named keep the known headers. */
export function parseColumnMapping(raw: string | undefined): Partial<Record<ReportField, string>> {
  if (raw === undefined || raw.trim() === '') return {};
  let pairs: Array<[string, unknown]>;
  if (raw.trim().startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw new AppError('VALIDATION_FAILED', 'columns is not valid JSON.', { errors: [{ path: 'columns', message: 'must be a JSON object or field:Header pairs' }] });
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new AppError('VALIDATION_FAILED', 'columns must be an object.', { errors: [{ path: 'columns', message: 'must be a JSON object or field:Header pairs' }] });
    pairs = Object.entries(parsed);
  } else {
    pairs = raw.split(',').map((p) => {
      const i = p.indexOf(':');
      return i < 0 ? [p.trim(), undefined] : [p.slice(0, i).trim(), p.slice(i + 1).trim()];
    });
  }
  const out: Partial<Record<ReportField, string>> = {};
  for (const [field, header] of pairs) {
    if (!(REPORT_FIELDS as readonly string[]).includes(field)) throw new AppError('VALIDATION_FAILED', `columns names an unknown field ${JSON.stringify(field.slice(0, 40))}; the fields are ${REPORT_FIELDS.join(', ')}.`, { errors: [{ path: 'columns', message: `unknown field ${field.slice(0, 40)}` }] });
    if (typeof header !== 'string' || header === '') throw new AppError('VALIDATION_FAILED', `columns: ${field} needs a header name.`, { errors: [{ path: 'columns', message: `${field} needs a header name` }] });
    out[field as ReportField] = header;
  }
  return out;
}

export type ColumnIndex = Partial<Record<ReportField, number>>;

/** Where each field is in this file's header row; 400 when a required one is not there. */
export function locateColumns(header: readonly string[], mapping: Partial<Record<ReportField, string>>): ColumnIndex {
  const at = new Map(header.map((h, i) => [norm(h), i]));
  const index: ColumnIndex = {};
  for (const field of REPORT_FIELDS) {
    const names = mapping[field] !== undefined ? [mapping[field]] : KNOWN_HEADERS[field];
    const found = names.map((n) => at.get(norm(n ?? ''))).find((i) => i !== undefined);
    if (found !== undefined) index[field] = found;
  }
  const missing = REQUIRED.filter((f) => index[f] === undefined);
  if (missing.length > 0) {
    const want = missing.map((f) => `${f} (${mapping[f] !== undefined ? JSON.stringify(mapping[f]) : KNOWN_HEADERS[f].slice(0, 3).map((h) => JSON.stringify(h)).join(' or ')})`);
    throw new AppError('VALIDATION_FAILED', `Line 1: the header has no column for ${want.join(', ')}; name them with ?columns=field:Header.`, { errors: missing.map((f) => ({ path: 'line 1', message: `no column for ${f}` })) });
  }
  return index;
}

function malformed(line: number, column: string, message: string): AppError {
  return new AppError('VALIDATION_FAILED', `Line ${line}, column ${JSON.stringify(column)}: ${message}.`, { errors: [{ path: `line ${line}, column ${column}`, message }] });
}

/** Whole rupiah: `150000`, `150000.00`, `150,000.00`, `150.000` (thousands dots), `Rp 150.000`; never negative. */
export function readAmount(raw: string, line: number, column: string): number {
  let s = raw.trim().replace(/^(rp|idr)\s*/i, '').replace(/\s/g, '');
  if (/^\d{1,3}(\.\d{3})+$/.test(s)) s = s.replace(/\./g, '');
  else if (/^\d{1,3}(,\d{3})+(\.\d{1,2})?$/.test(s)) s = s.replace(/,/g, '');
  const m = /^(\d{1,15})(\.(\d{1,2}))?$/.exec(s);
  if (!m) throw malformed(line, column, `${JSON.stringify(raw.slice(0, 40))} is not an amount in rupiah`);
  if (m[3] !== undefined && Number(m[3]) !== 0) throw malformed(line, column, `${JSON.stringify(raw.slice(0, 40))} has a fraction of a rupiah`);
  return Number(m[1]);
}

/** `YYYY-MM-DD HH:MM:SS` (Jakarta, as the gateway writes it) or ISO 8601 with an offset → ISO with offset; empty → null. */
export function readTime(raw: string, line: number, column: string): string | null {
  const s = raw.trim();
  if (s === '') return null;
  const local = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2})?))?$/.exec(s);
  if (local) return `${local[1]}T${(local[2] ?? '00:00:00').padEnd(8, ':00')}+07:00`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s) && !Number.isNaN(Date.parse(s))) return s;
  throw malformed(line, column, `${JSON.stringify(s.slice(0, 40))} is not a date and time (YYYY-MM-DD HH:MM:SS, Jakarta time, or ISO 8601 with an offset)`);
}

/** One data line of the file as a report row. */
export function readRow(cells: readonly string[], line: number, index: ColumnIndex, header: readonly string[]): ReportRow {
  const cell = (f: ReportField): string | undefined => (index[f] === undefined ? undefined : (cells[index[f] ?? 0] ?? '').trim());
  const name = (f: ReportField) => header[index[f] ?? 0] ?? f;
  const required = (f: ReportField): string => {
    const v = cell(f);
    if (v === undefined || v === '') throw malformed(line, name(f), 'is empty');
    return v;
  };
  const amountOf = (f: ReportField): number | null => {
    const v = cell(f);
    return v === undefined || v === '' ? null : readAmount(v, line, name(f));
  };
  const timeOf = (f: ReportField): string | null => {
    const v = cell(f);
    return v === undefined ? null : readTime(v, line, name(f));
  };
  return {
    line,
    orderId: required('order_id'),
    transactionId: cell('transaction_id') || null,
    status: required('status').toLowerCase(),
    amount: readAmount(required('amount'), line, name('amount')),
    fee: amountOf('fee'),
    net: amountOf('net'),
    originalAmount: amountOf('original_amount'),
    paymentType: cell('payment_type') || null,
    transactionTime: timeOf('transaction_time'),
    settlementTime: timeOf('settlement_time'),
  };
}
