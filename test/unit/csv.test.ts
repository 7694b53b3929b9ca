import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { csvLine, type CsvSeparator } from '../../src/http/csv.js';

/** RFC 4180 read back: quoted fields with doubled quotes, split at `sep`. */
function readLine(line: string, sep: CsvSeparator = ','): string[] {
  const out: string[] = [];
  let i = 0;
  const s = line.replace(/\r\n$/, '');
  for (;;) {
    let v = '';
    if (s[i] === '"') {
      i++;
      for (;;) {
        if (s[i] === '"' && s[i + 1] === '"') {
          v += '"';
          i += 2;
        } else if (s[i] === '"') {
          i++;
          break;
        } else v += s[i++];
      }
    } else while (i < s.length && s[i] !== sep) v += s[i++];
    out.push(v);
    if (i >= s.length) return out;
    i++;
  }
}

/** What starts a formula in some spreadsheet. */
const FORMULA = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/**
 * The cells a spreadsheet sees when it splits the line at its own list separator and at line ends,
 * ignoring quotes (as it does when the file's separator is not its own), with what it skips at a
 * cell's start (spaces, a quote) taken away.
 */
function naiveCells(line: string, listSeparator: string): string[] {
  return line
    .replace(/\r\n$/, '')
    .split(new RegExp(`[${listSeparator}\\r\\n]`))
    .map((c) => c.replace(/^[ "]*/, ''));
}

/** Text made mostly of the characters that matter here. */
const hostileText = fc.string({
  unit: fc.oneof(
    fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', ',', ';', '"', ' ', "'", '\uFF1D', '\uFF0D', '|', 'A', '1'),
    fc.string({ unit: 'grapheme', maxLength: 1 }),
  ),
  maxLength: 20,
});

describe('CSV cells', () => {
  it('quotes what needs it, neutralises formulas, writes numbers and empties as they are', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', 42, null, undefined, ' pad'])).toBe(
      'a,"b,c","say ""hi""","two\nlines",42,,," pad"\r\n',
    );
    expect(csvLine(['=1+1', '+62', '-5', '@SUM(A1)', '\tx'])).toBe("'=1+1,'+62,'-5,'@SUM(A1),\"'\tx\"\r\n");
  });

  it('a formula after a `;`, `,` or tab inside a cell is neutralised too, and the cell is quoted', () => {
    expect(csvLine(["x;=cmd|'/C calc'!A0", 'X2;-2+3', 'a, +1', 'b\t@x', 'c;"=d"', 'e;\uFF1D1'])).toBe(
      `"x;'=cmd|'/C calc'!A0","X2;'-2+3","a, '+1","b\t'@x","c;""'=d""","e;'\uFF1D1"\r\n`,
    );
    // Dashes and signs elsewhere are left alone: a date, a hyphenated id, an e-mail address.
    expect(csvLine(['2024-01-31', 'INV-7', 'a@b.id', 'x=y'])).toBe('2024-01-31,INV-7,a@b.id,x=y\r\n');
  });

  it('numbers stay numbers, negative ones included', () => {
    expect(csvLine([-5000, 0, 12_500, -1, true])).toBe('-5000,0,12500,-1,true\r\n');
    expect(csvLine([-5000, '-5000'], ';')).toBe("-5000;'-5000\r\n");
  });

  it('with `;` between cells a `;` is quoted and a `,` need not be', () => {
    expect(csvLine(['a,b', 'c;d', 'e', 7], ';')).toBe('a,b;"c;d";e;7\r\n');
    expect(csvLine(['x,=1', 'y;-2'], ';')).toBe(`x,'=1;"y;'-2"\r\n`);
  });

  it.each([[','], [';']] as const)(
    "property (sep %s): every cell reads back as written, but for a `'` in front of a formula",
    (sep) => {
      fc.assert(
        fc.property(fc.array(hostileText, { minLength: 1, maxLength: 6 }), (cells) => {
          const back = readLine(csvLine(cells, sep), sep);
          expect(back).toHaveLength(cells.length);
          back.forEach((v, i) => {
            const original = cells[i] ?? '';
            expect(v.replace(/'/g, '')).toBe(original.replace(/'/g, ''));
            if (!/[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/.test(original)) expect(v).toBe(original);
          });
        }),
      );
    },
  );

  it.each([[','], [';']] as const)(
    'property (sep %s): a spreadsheet splitting at `,`, `;` or tab, quotes ignored, finds no formula in a text cell',
    (sep) => {
      fc.assert(
        fc.property(fc.array(hostileText, { minLength: 1, maxLength: 6 }), (cells) => {
          const line = csvLine(cells, sep);
          for (const listSeparator of [',', ';', '\t']) {
            for (const c of naiveCells(line, listSeparator)) expect(c).not.toMatch(FORMULA);
          }
        }),
      );
    },
  );
});
