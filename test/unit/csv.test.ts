import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { csvLine } from '../../src/http/csv.js';

/** RFC 4180 read back: quoted fields with doubled quotes. */
function readLine(line: string): string[] {
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
    } else while (i < s.length && s[i] !== ',') v += s[i++];
    out.push(v);
    if (i >= s.length) return out;
    i++;
  }
}

describe('CSV cells', () => {
  it('quotes what needs it, neutralises formulas, writes numbers and empties as they are', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', 42, null, undefined, ' pad'])).toBe('a,"b,c","say ""hi""","two\nlines",42,,," pad"\r\n');
    expect(csvLine(['=1+1', '+62', '-5', '@SUM(A1)', '\tx'])).toBe("'=1+1,'+62,'-5,'@SUM(A1),'\tx\r\n");
  });

  it('property: any text reads back as written (or with the formula guard in front), one cell per value', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 1, maxLength: 6 }), (cells) => {
        const back = readLine(csvLine(cells));
        expect(back).toHaveLength(cells.length);
        back.forEach((v, i) => expect(v).toBe(/^[=+\-@\t\r]/.test(cells[i] ?? '') ? `'${cells[i]}` : cells[i]));
      }),
    );
  });
});
