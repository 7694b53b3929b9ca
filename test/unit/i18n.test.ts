import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LANGS, defineMessages, formatRupiah, pickLang, translator, type Messages } from '../../src/platform/i18n.js';

describe('language of a page', () => {
  it('takes ?lang, then the cookie, then Accept-Language by weight, then English', () => {
    expect(pickLang({ query: 'id', cookie: 'en', acceptLanguage: 'en' })).toBe('id');
    expect(pickLang({ query: 'fr', cookie: 'id', acceptLanguage: 'en' })).toBe('id');
    expect(pickLang({ cookie: 'xx', acceptLanguage: 'id-ID,id;q=0.9,en-US;q=0.8' })).toBe('id');
    expect(pickLang({ acceptLanguage: 'en;q=0.5, id;q=0.9' })).toBe('id');
    expect(pickLang({ acceptLanguage: 'fr-FR, en-GB;q=0.7' })).toBe('en');
    expect(pickLang({ acceptLanguage: 'in' })).toBe('id');
    expect(pickLang({ acceptLanguage: 'id;q=0, en;q=0.1' })).toBe('en');
    expect(pickLang({ acceptLanguage: 'fr, de' })).toBe('en');
    expect(pickLang({})).toBe('en');
  });
});

describe('catalogues', () => {
  it('fills {placeholders} and leaves unknown ones visible', () => {
    const m = defineMessages({ hi: 'Hello {name}, {n} items' }, { hi: 'Halo {name}, {n} barang' });
    expect(translator(m, 'id')('hi', { name: 'Ani', n: 3 })).toBe('Halo Ani, 3 barang');
    expect(translator(m, 'en')('hi', { name: 'Ann' })).toBe('Hello Ann, {n} items');
  });

  it("every catalogue (the console's and the simulator's) has every key, non-empty, in both languages, with the same placeholders", async () => {
    const files = ['src/http/console/i18n', 'simulator/i18n'].flatMap((d) =>
      fs
        .readdirSync(path.resolve(d))
        .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
        .map((f) => path.join(path.resolve(d), f)),
    );
    let catalogues = 0;
    for (const f of files) {
      const mod = (await import(f)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (value === null || typeof value !== 'object' || !('en' in value) || !('id' in value)) continue;
        const m = value as Messages<string>;
        catalogues++;
        const keys = new Set(LANGS.flatMap((l) => Object.keys(m[l])));
        for (const lang of LANGS) {
          for (const k of keys) {
            const text = m[lang][k];
            expect(typeof text === 'string' && text.trim() !== '', `${f} ${name}.${lang}.${k}`).toBe(true);
            const holes = (s: string | undefined) => [...(s ?? '').matchAll(/\{(\w+)\}/g)].map((x) => x[1]).sort();
            expect(holes(text), `${f} ${name}.${lang}.${k} placeholders`).toEqual(holes(m.en[k]));
          }
        }
      }
    }
    expect(catalogues).toBeGreaterThanOrEqual(files.length);
  });

  it('writes rupiah with Indonesian grouping', () => {
    expect(formatRupiah(1_500_000)).toBe('Rp 1.500.000');
    expect(formatRupiah(-2500)).toBe('-Rp 2.500');
    expect(formatRupiah(null)).toBe('—');
  });
});
