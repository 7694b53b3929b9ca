/**
 * What every console page needs to speak to its reader: the language, its words, and times and
 * amounts written for that language. One zone label (e.g. `WIB`) is used for every time and in the
 * page header, whatever the runtime's own abbreviation for the zone would be.
 */
import { translator, type Lang, type Params, type Translate } from '../../platform/i18n.js';
import { consoleMessages, type ConsoleKey } from './i18n/console.js';
import { paymentTypeWord } from './i18n/glossary.js';

export interface View {
  lang: Lang;
  t: Translate<ConsoleKey>;
  timeZone: string;
  /** The one label of the console's time zone (`WIB` for Asia/Jakarta). */
  zone: string;
  /** A time in the console's zone and the page's language, with the zone label; `—` for nothing. */
  when(iso: string | null | undefined): string;
  /** The word for a value (`st_paid` → "paid"; `pt`: a payment type), or the value itself when the catalogue has none. */
  word(prefix: 'st' | 'gs' | 'nr' | 'src' | 'lv' | 'kind' | 'pt', value: string): string;
  /** `base_one` or `base_other` by the language's plural rules, with `{count}` filled in. */
  plural(base: string, count: number, params?: Params): string;
}

/** The one placeholder for a value that is absent. */
export const EMPTY = '—';

const ZONE_LABELS: Record<string, string> = {
  'Asia/Jakarta': 'WIB',
  'Asia/Pontianak': 'WIB',
  'Asia/Makassar': 'WITA',
  'Asia/Jayapura': 'WIT',
  UTC: 'UTC',
  'Etc/UTC': 'UTC',
};

export function zoneLabel(timeZone: string): string {
  const known = ZONE_LABELS[timeZone];
  if (known) return known;
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(new Date(0));
  return parts.find((p) => p.type === 'timeZoneName')?.value ?? timeZone;
}

const isKey = (k: string): k is ConsoleKey => Object.hasOwn(consoleMessages.en, k);

export function consoleView(lang: Lang, timeZone: string): View {
  const t = translator(consoleMessages, lang);
  const zone = zoneLabel(timeZone);
  const plurals = new Intl.PluralRules(lang === 'id' ? 'id-ID' : 'en-US');
  const fmt =
    lang === 'id'
      ? new Intl.DateTimeFormat('id-ID', {
          timeZone,
          day: 'numeric',
          month: 'short',
          year: 'numeric',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
          hourCycle: 'h23',
        })
      : new Intl.DateTimeFormat('en-CA', {
          timeZone,
          year: 'numeric',
          month: '2-digit',
          day: '2-digit',
          hour: '2-digit',
          minute: '2-digit',
          second: '2-digit',
          hourCycle: 'h23',
        });
  return {
    lang,
    t,
    timeZone,
    zone,
    when(iso) {
      if (!iso) return EMPTY;
      const d = new Date(iso);
      if (Number.isNaN(d.getTime())) return iso;
      const parts = fmt.formatToParts(d);
      const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
      // English: 2026-11-22 17:05:09 WIB; Indonesian: 22 Nov 2026 17.05.09 WIB.
      return lang === 'id'
        ? `${get('day')} ${get('month')} ${get('year')} ${get('hour')}.${get('minute')}.${get('second')} ${zone}`
        : `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}:${get('second')} ${zone}`;
    },
    word(prefix, value) {
      if (prefix === 'pt') return paymentTypeWord(lang, value);
      const key = `${prefix}_${value}`;
      return isKey(key) ? t(key) : value;
    },
    plural(base, count, params = {}) {
      const key = `${base}_${plurals.select(count)}`;
      const fallback = `${base}_other`;
      const k = isKey(key) ? key : isKey(fallback) ? fallback : undefined;
      return k ? t(k, { count, ...params }) : String(count);
    },
  };
}
