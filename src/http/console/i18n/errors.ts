/**
 * What went wrong, said to an operator: the service's messages (written for API callers, in
 * English) read again in the page's language, in the console's words. The API keeps its own
 * messages; only the console's pages say them this way. A message with no wording here is shown as
 * it is on an English page and left out of an Indonesian one (its headline says what happened).
 */
import type { Lang } from '../../../platform/i18n.js';
import { formatRupiah } from '../../../platform/i18n.js';

type Words = (m: RegExpExecArray, lang: Lang, word: (status: string) => string) => string;

interface Phrase {
  pattern: RegExp;
  /** The English page's words when the service's own are API-speak; absent: the message as it is. */
  en?: Words;
  id: Words;
}

const g = (m: RegExpExecArray, i: number) => m[i] ?? '';
const rp = (digits: string) => formatRupiah(Number(digits));

const PHRASES: readonly Phrase[] = [
  { pattern: /^No payment (".*")\.$/, id: (m) => `Tidak ada pembayaran ${g(m, 1)}.` },
  {
    pattern: /^amount must be between 1 and (\d+) \(what is left of (\d+)\)\.$/,
    id: (m) => `Jumlah harus antara Rp 1 dan ${rp(g(m, 1))} (sisa dari ${rp(g(m, 2))}).`,
  },
  {
    pattern: /^(".*") is not an amount in rupiah for a refund\.$/,
    en: (m) =>
      `${g(m, 1)} is not an amount in rupiah: type it as 50000, 50.000 or Rp 50.000, or leave it empty to refund all that is left.`,
    id: (m) =>
      `${g(m, 1)} bukan jumlah rupiah: tulis seperti 50000, 50.000 atau Rp 50.000, atau kosongkan untuk mengembalikan seluruh sisa.`,
  },
  {
    pattern: /^(".*") has a fraction of a rupiah for a refund\.$/,
    en: (m) => `${g(m, 1)} has a fraction of a rupiah: refunds are in whole rupiah.`,
    id: (m) => `${g(m, 1)} memuat pecahan rupiah: pengembalian dana dalam rupiah utuh.`,
  },
  {
    pattern: /^Line 1: the header has no column for (.*); name them with \?columns=field:Header\.$/,
    en: (m) =>
      `Line 1: the header has no column for ${g(m, 1)}. Write the report's header names in the field "Column names, for other layouts", for example order_id:Invoice, amount:Total.`,
    id: (m) =>
      `Baris 1: judul laporan tidak memuat kolom untuk ${g(m, 1).replace(/ or /g, ' atau ')}. Tulis nama kolom laporan di isian "Nama kolom, untuk tata letak lain", misalnya order_id:Invoice, amount:Total.`,
  },
  {
    pattern: /^Line (\d+), column (".*"): (".*") is not an amount in rupiah \((.*)\)\.$/,
    id: (m) =>
      `Baris ${g(m, 1)}, kolom ${g(m, 2)}: ${g(m, 3)} bukan jumlah rupiah (${g(m, 4).replace(/ or /g, ' atau ')}).`,
  },
  {
    pattern: /^Line (\d+), column (".*"): (".*") has a fraction of a rupiah\.$/,
    id: (m) => `Baris ${g(m, 1)}, kolom ${g(m, 2)}: ${g(m, 3)} memuat pecahan rupiah.`,
  },
  { pattern: /^Choose the report file to import\.$/, id: () => 'Pilih berkas laporan yang akan diimpor.' },
  {
    pattern: /^The report is empty: it needs a header line and rows\.$/,
    id: () => 'Laporannya kosong: perlu baris judul dan baris data.',
  },
  {
    pattern: /^from and to go together, as YYYY-MM-DD with from ≤ to\.$/,
    id: () =>
      'Isi hari pertama dan hari terakhir yang dicakup bersama-sama (YYYY-MM-DD), hari pertama tidak setelah hari terakhir.',
  },
  {
    pattern: /^(.*) is captured but not settled yet: /,
    id: (m) =>
      `${g(m, 1)} sudah ditagih ke kartu tetapi belum diselesaikan: gateway baru dapat mengembalikan dananya setelah penyelesaian. Batalkan pembayarannya untuk membatalkan transaksi sekarang, atau kembalikan dana setelah penyelesaian.`,
  },
  {
    pattern: /^The gateway does not refund payments made by /,
    id: () =>
      'Gateway tidak mengembalikan dana untuk metode pembayaran ini: kembalikan uangnya dengan cara lain (misalnya transfer bank) dan catat di ERP.',
  },
  {
    pattern: /^(.*) is (\w+): it cannot be (refunded|cancelled|expired)\.$/,
    id: (m, _lang, word) =>
      `${g(m, 1)} berstatus ${word(g(m, 2))}: ${{ refunded: 'dananya tidak dapat dikembalikan', cancelled: 'tidak dapat dibatalkan', expired: 'tidak dapat diakhiri' }[g(m, 3) as 'refunded']}.`,
  },
  {
    pattern: /^Another refund of (.*) is being made at the gateway; retry when it has finished\.$/,
    id: (m) => `Pengembalian dana lain untuk ${g(m, 1)} sedang diproses di gateway; coba lagi setelah selesai.`,
  },
];

/** The message in the page's language and words, or undefined when an Indonesian page has no words for it. */
export function operatorMessage(message: string, lang: Lang, word: (status: string) => string): string | undefined {
  for (const p of PHRASES) {
    const m = p.pattern.exec(message);
    if (!m) continue;
    const say = lang === 'id' ? p.id : p.en;
    return say ? say(m, lang, word) : message;
  }
  return lang === 'id' ? undefined : message;
}

const FIELD_PHRASES: ReadonlyArray<readonly [RegExp, (m: RegExpExecArray) => string]> = [
  [/^must be between (\d+) and (\d+)$/, (m) => `harus antara ${g(m, 1)} dan ${g(m, 2)}`],
  [/^must be (>=|≥) ?([\d.]+)$/, (m) => `minimal ${g(m, 2)}`],
  [/^must be (<=|≤) ?([\d.]+)$/, (m) => `maksimal ${g(m, 2)}`],
  [/^must be (number|integer|a number|a whole number)$/, () => 'harus berupa angka'],
  [/^must be a whole number of rupiah$/, () => 'harus berupa jumlah rupiah utuh'],
  [/^no file$/, () => 'belum ada berkas'],
  [/^no column for (.*)$/, (m) => `tidak ada kolom untuk ${g(m, 1)}`],
  [/^must be a date YYYY-MM-DD$/, () => 'harus berupa tanggal YYYY-MM-DD'],
];

/** A field's problem on an Indonesian page: its words, or a plain "not right" when there are none. */
export function fieldMessageId(message: string): string {
  for (const [pattern, say] of FIELD_PHRASES) {
    const m = pattern.exec(message);
    if (m) return say(m);
  }
  return 'nilainya tidak benar';
}
