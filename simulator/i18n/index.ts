/**
 * The languages of the simulator's hosted pages (English and Bahasa Indonesia): choosing one for a
 * request, a catalogue's type, filling in a message, and the rupiah.
 *
 * This repeats paylink's own `src/platform/i18n.ts` on purpose. The simulator is the oracle the
 * tests check paylink against, so it shares no code with it (lint forbids any import of `src/`);
 * 60 lines written twice cost less than a bug both sides would agree on. The cookie keeps the name
 * paylink's console uses, `paylink_lang`: cookies ignore the port, so on one host the console and the
 * embedded simulator's pages share the choice.
 */

export const LANGS = ['en', 'id'] as const;
export type Lang = (typeof LANGS)[number];
const DEFAULT_LANG: Lang = 'en';
const LANG_COOKIE = 'paylink_lang';
const YEAR_S = 365 * 24 * 3600;

function isLang(v: unknown): v is Lang {
  return typeof v === 'string' && (LANGS as readonly string[]).includes(v);
}

/**
 * A page's language: the explicit choice (`?lang=`), then the one remembered in the cookie, then the
 * browser's first supported `Accept-Language` range (by its q weight), then English; and the
 * `Set-Cookie` value that remembers an explicit choice (a year, the whole site) when the cookie
 * does not already hold it.
 */
export function negotiateLang(r: {
  query: unknown;
  cookieHeader: string | undefined;
  acceptLanguage: string | undefined;
  secure: boolean;
}): { lang: Lang; setCookie?: string } {
  const cookie = r.cookieHeader
    ?.split(';')
    .map((c) => c.trim().split('='))
    .find(([k]) => k === LANG_COOKIE)?.[1];
  const lang = isLang(r.query)
    ? r.query
    : isLang(cookie)
      ? cookie
      : (fromAcceptLanguage(r.acceptLanguage) ?? DEFAULT_LANG);
  if (!isLang(r.query) || r.query === cookie) return { lang };
  return {
    lang,
    setCookie: `${LANG_COOKIE}=${r.query}; Path=/; Max-Age=${YEAR_S}; SameSite=Lax${r.secure ? '; Secure' : ''}`,
  };
}

function fromAcceptLanguage(header: string | undefined): Lang | undefined {
  if (!header) return undefined;
  const ranges = header
    .slice(0, 500)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)).find((m) => m)?.[1];
      return { base: tag.trim().toLowerCase().split('-')[0] ?? '', q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  // `in` is the old code for Indonesian, still sent by some systems.
  for (const r of ranges) {
    if (r.base === 'id' || r.base === 'in') return 'id';
    if (r.base === 'en') return 'en';
  }
  return undefined;
}

export type Messages<K extends string> = Readonly<Record<Lang, Readonly<Record<K, string>>>>;

/** A catalogue: the English messages, and the Indonesian ones with exactly the same keys. */
export function defineMessages<const E extends Record<string, string>>(
  en: E,
  id: { readonly [K in keyof E]: string },
): Messages<Extract<keyof E, string>> {
  return { en, id } as Messages<Extract<keyof E, string>>;
}

type Params = Readonly<Record<string, string | number>>;
export type Translate<K extends string> = (key: K, params?: Params) => string;

/** `{name}` in a message is replaced by `params.name`; a placeholder without a value stays visible. */
export function translator<K extends string>(messages: Messages<K>, lang: Lang): Translate<K> {
  const table = messages[lang];
  return (key, params) => {
    const text = table[key];
    return params ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m)) : text;
  };
}

/** `Rp 150.000` in both languages (Indonesian grouping everywhere), whole rupiah. */
export function formatRupiah(n: number | null | undefined, empty = '—'): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return empty;
  const sign = n < 0 ? '-' : '';
  return `${sign}Rp ${Math.abs(Math.trunc(n))
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, '.')}`;
}
