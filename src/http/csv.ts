/**
 * CSV as spreadsheets read it: UTF-8 with a byte-order mark (so Excel does not guess another
 * encoding), RFC 4180 quoting, CRLF line ends, a header row, `,` between cells or `;` when asked
 * (`sep=;`, the list separator of the Indonesian and most European locales).
 *
 * No text cell can become a formula, whatever separator the spreadsheet splits on. A spreadsheet
 * whose list separator is not the file's splits every line at its own separator and does not honour
 * quotes that are not at the start of what it takes for a cell, so a `;` inside a quoted cell of a
 * `,` file starts a new cell there. Hence the rule: wherever a cell could start — at the start of the
 * text, or after any `,` `;` tab CR or LF in it — and after any spaces or `"` there, a character a
 * spreadsheet reads as the start of a formula (`=` `+` `-` `@` tab CR, or the fullwidth `＝` `＋`
 * `－` `＠` that East Asian input methods produce and some spreadsheets fold into them) gets a `'`
 * in front of it. An order id `X2;-2+3` is written `X2;'-2+3`; a cell `=1+1` is `'=1+1`. The text
 * is otherwise as it was. A cell is quoted when it holds a `"`, CR, LF, tab, `;`, the separator,
 * or space at either end.
 *
 * Numbers (amounts, counts) are written as numbers, negative ones included: `-5000` is a refund, and
 * a spreadsheet must sum it. Only text from outside (an order id, a name, a report's cell) is guarded.
 *
 * No `sep=;` first line: it is Excel's alone (every RFC 4180 reader takes it for the header row), and
 * with it Excel ignores the byte-order mark and reads the file in the system's code page, garbling
 * any non-ASCII name.
 */
export const CSV_BOM = '\uFEFF';
export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

export const CSV_SEPARATORS = [',', ';'] as const;
export type CsvSeparator = (typeof CSV_SEPARATORS)[number];

export type Cell = string | number | boolean | null | undefined;

/** Where a spreadsheet may start a cell (the start of the text, a separator or line end in it) and what it skips there. */
const FORMULA_START = /(?<=^|[,;\t\r\n])([ "]*)(?=[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20])/g;

function cell(v: Cell, sep: CsvSeparator): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const safe = v.replace(FORMULA_START, "$1'");
  const quote = /["\r\n\t;]/.test(safe) || safe.includes(sep) || safe !== safe.trim();
  return quote ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function csvLine(cells: readonly Cell[], sep: CsvSeparator = ','): string {
  return `${cells.map((c) => cell(c, sep)).join(sep)}\r\n`;
}
