/**
 * A report file as CSV records, read as it streams in: one encoding and one separator for the whole
 * file, both settled before the first record. The encoding comes from the byte-order mark (UTF-16
 * LE or BE with one, UTF-8 otherwise; bytes that are not UTF-8 are a 400); the separator is the one
 * given, else the one of `,` `;` and tab the header line uses most. Separators guessed cell by cell
 * would split `150000,00` of a semicolon file into two cells: a misread, never an error.
 */
import { Readable, Transform, type TransformCallback } from 'node:stream';
import type { Hash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { parse, CsvError } from 'csv-parse';
import { AppError } from '../../platform/errors.js';

export const SEPARATORS = { comma: ',', semicolon: ';', tab: '\t' } as const;
export type SeparatorName = keyof typeof SEPARATORS;
type Separator = (typeof SEPARATORS)[SeparatorName];
const isSeparatorName = (s: string): s is SeparatorName => Object.hasOwn(SEPARATORS, s);

/** A separator named by the operator (`comma`, `semicolon`, `tab`); empty: none named. */
export function separatorNamed(value: string | undefined): SeparatorName | undefined {
  if (value === undefined || value === '') return undefined;
  if (isSeparatorName(value)) return value;
  const names = Object.keys(SEPARATORS).join(', ');
  throw new AppError('VALIDATION_FAILED', `separator is one of ${names}.`, {
    errors: [{ path: 'separator', message: `must be one of ${names}` }],
  });
}

export interface ReportRecord {
  cells: string[];
  /** The file's line where the record ends (1 = the header). */
  line: number;
}

/** Longest header line looked at for the separator, characters. */
const HEADER_MAX = 64 * 1024;

function encodingOf(start: Buffer): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if (start[0] === 0xff && start[1] === 0xfe) return 'utf-16le';
  if (start[0] === 0xfe && start[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

const notText = (line: number) =>
  new AppError(
    'VALIDATION_FAILED',
    `Line ${line}: the file is not text in UTF-8 (or UTF-16 with a byte-order mark); export the report as CSV.`,
    { errors: [{ path: `line ${line}`, message: 'not UTF-8 text' }] },
  );

/** Bytes → text in the file's encoding, its byte-order mark dropped; the bytes hashed and counted as they pass. */
class ReportDecoder extends Transform {
  private decoder: TextDecoder | undefined;
  private head = Buffer.alloc(0);
  private line = 1;
  private bytes = 0;

  constructor(
    private readonly hash: Hash,
    private readonly maxBytes: number,
  ) {
    super({ readableObjectMode: true });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes)
      return done(
        new AppError(
          'PAYLOAD_TOO_LARGE',
          `The report exceeds ${this.maxBytes / 1024 / 1024} MB; export fewer days at a time.`,
        ),
      );
    this.hash.update(chunk);
    if (this.decoder) return this.decode(chunk, true, done);
    // The byte-order mark is read whole before anything is decoded.
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length < 3) return done();
    this.decoder = new TextDecoder(encodingOf(this.head), { fatal: true });
    this.decode(this.head, true, done);
  }

  override _flush(done: TransformCallback): void {
    if (this.decoder) return this.decode(Buffer.alloc(0), false, done);
    this.decoder = new TextDecoder(encodingOf(this.head), { fatal: true });
    this.decode(this.head, false, done);
  }

  private decode(bytes: Buffer, stream: boolean, done: TransformCallback): void {
    let text: string;
    try {
      text = this.decoder?.decode(bytes, { stream }) ?? '';
    } catch {
      return done(notText(this.line));
    }
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.line++;
    if (text !== '') this.push(text);
    done();
  }
}

/** The separator the header line uses most, outside quotes; a tie between two is a 400. */
function detectSeparator(head: string): Separator {
  const counts = new Map<Separator, number>(Object.values(SEPARATORS).map((s) => [s, 0]));
  let quoted = false;
  for (const ch of head) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch as Separator))
      counts.set(ch as Separator, (counts.get(ch as Separator) ?? 0) + 1);
  }
  const ranked = [...counts].sort((a, b) => b[1] - a[1]);
  const [best, second] = ranked;
  if (!best || best[1] === 0) return ',';
  if (second && second[1] === best[1]) {
    const names = Object.entries(SEPARATORS)
      .filter(([, s]) => counts.get(s) === best[1])
      .map(([n]) => n);
    throw new AppError(
      'VALIDATION_FAILED',
      `Line 1: the header line is separated by ${names.join(' and by ')} as often; name the separator with separator=${names.join(' or separator=')}.`,
      { errors: [{ path: 'line 1', message: `separator unclear: ${names.join(' or ')}` }] },
    );
  }
  return best[0];
}

/** A file that is not CSV: the line (and field) where reading stopped. */
function csvProblem(err: CsvError): AppError {
  const lines = typeof err.lines === 'number' ? err.lines : undefined;
  const column =
    typeof err.index === 'number' ? err.index + 1 : typeof err.column === 'number' ? err.column + 1 : undefined;
  const where = `${lines !== undefined ? `Line ${lines}` : 'The file'}${column !== undefined ? `, column ${column}` : ''}`;
  return new AppError('VALIDATION_FAILED', `${where}: ${err.message.replace(/^[A-Za-z ]+: /, '')}`, {
    errors: [{ path: where.toLowerCase(), message: err.code }],
  });
}

/**
 * The records of `body`, header first; `hash` is fed its bytes. On an early stop (a row refused) the body is left unread
 * rather than destroyed, so the answer still reaches the sender over the same connection.
 */
export async function* readRecords(
  body: Readable,
  o: { hash: Hash; maxBytes: number; separator?: SeparatorName },
): AsyncGenerator<ReportRecord> {
  const decoder = new ReportDecoder(o.hash, o.maxBytes);
  body.once('error', (err) => decoder.destroy(err));
  // Past the size limit nothing more of the body is read.
  decoder.once('error', (err) => {
    if (err instanceof AppError && err.code === 'PAYLOAD_TOO_LARGE') body.destroy(err);
  });
  const text: AsyncIterator<string> = body.pipe(decoder)[Symbol.asyncIterator]();
  let source: Readable | undefined;
  try {
    let head = '';
    while (!/[\r\n]/.test(head) && head.length < HEADER_MAX) {
      const next = await text.next();
      if (next.done === true) break;
      head += next.value;
    }
    const delimiter = o.separator !== undefined ? SEPARATORS[o.separator] : detectSeparator(head);
    const rest = async function* (): AsyncGenerator<string> {
      if (head !== '') yield head;
      for (let next = await text.next(); next.done !== true; next = await text.next()) yield next.value;
    };
    const from = Readable.from(rest(), { objectMode: true });
    source = from;
    const parser = from.pipe(
      parse({
        bom: true,
        info: true,
        delimiter,
        skip_empty_lines: true,
        relax_column_count: true,
        max_record_size: 64 * 1024,
      }),
    );
    from.once('error', (err) => parser.destroy(err));
    for await (const rec of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>)
      yield { cells: rec.record, line: rec.info.lines };
  } catch (err) {
    if (err instanceof CsvError) throw csvProblem(err);
    throw err;
  } finally {
    source?.destroy();
    decoder.destroy();
  }
}
