/**
 * The console's core terms, once per language: every catalogue builds its messages from these, so a
 * term reads the same on every page (the menu, a heading, a badge, a button). A finance operator's
 * words, not the gateway's or the code's: no payment-type codes, no English on Indonesian pages.
 */
export const GLOSSARY = {
  en: {
    status: 'Status',
    id: 'ID',
    erpNotifications: 'ERP notifications',
    dead: 'failed for good',
    deadTitle: 'Failed for good',
    leaseLost: 'taken over by another instance',
    requestFailed: 'The request failed.',
    expected: 'Amount billed',
    net: 'Received net',
    exceptions: 'Differences',
    expireNow: 'End now',
    back: 'Cancel',
    reachable: 'reachable',
    ok: 'normal',
    error: 'error',
    trace: 'trace',
    settledAt: 'Settled at',
    paidAt: 'Paid at',
    directCharge: 'direct charge',
    account: 'Account',
    allAccounts: 'All accounts',
  },
  id: {
    status: 'Status',
    id: 'ID',
    erpNotifications: 'Notifikasi ERP',
    dead: 'gagal permanen',
    deadTitle: 'Gagal permanen',
    leaseLost: 'diambil alih instans lain',
    requestFailed: 'Permintaan gagal.',
    expected: 'Jumlah tagihan',
    net: 'Diterima bersih',
    exceptions: 'Selisih',
    expireNow: 'Akhiri sekarang',
    back: 'Batal',
    reachable: 'dapat dihubungi',
    ok: 'normal',
    error: 'error',
    trace: 'trace',
    settledAt: 'Waktu penyelesaian dana',
    paidAt: 'Dibayar pada',
    directCharge: 'tagihan langsung',
    account: 'Akun',
    allAccounts: 'Semua akun',
  },
} as const;

/**
 * Payment types (the gateway's `payment_type`) in words. A type without a word is shown as
 * "other method (code)", never as a bare code at the start of a sentence.
 */
export const PAYMENT_TYPE_WORDS = {
  en: {
    credit_card: 'Card',
    bank_transfer: 'Bank transfer (virtual account)',
    echannel: 'Mandiri Bill',
    permata: 'Permata virtual account',
    gopay: 'GoPay',
    shopeepay: 'ShopeePay',
    qris: 'QRIS',
    other_qris: 'QRIS',
    cstore: 'Convenience store',
    alfamart: 'Alfamart',
    indomaret: 'Indomaret',
    akulaku: 'Akulaku',
    kredivo: 'Kredivo',
    dana: 'DANA',
    ovo: 'OVO',
    bca_klikpay: 'BCA KlikPay',
    bca_klikbca: 'KlikBCA',
    cimb_clicks: 'CIMB Clicks',
    danamon_online: 'Danamon Online Banking',
    uob_ezpay: 'UOB EZ Pay',
    google_pay: 'Google Pay',
    unknown: 'unknown method',
  },
  id: {
    credit_card: 'Kartu',
    bank_transfer: 'Transfer bank (virtual account)',
    echannel: 'Mandiri Bill',
    permata: 'Virtual account Permata',
    gopay: 'GoPay',
    shopeepay: 'ShopeePay',
    qris: 'QRIS',
    other_qris: 'QRIS',
    cstore: 'Gerai ritel',
    alfamart: 'Alfamart',
    indomaret: 'Indomaret',
    akulaku: 'Akulaku',
    kredivo: 'Kredivo',
    dana: 'DANA',
    ovo: 'OVO',
    bca_klikpay: 'BCA KlikPay',
    bca_klikbca: 'KlikBCA',
    cimb_clicks: 'CIMB Clicks',
    danamon_online: 'Danamon Online Banking',
    uob_ezpay: 'UOB EZ Pay',
    google_pay: 'Google Pay',
    unknown: 'metode tidak dikenal',
  },
} as const;

const OTHER = { en: 'other method ({code})', id: 'metode lain ({code})' } as const;

/** A payment type in words for `lang`; null or empty → the "unknown" word. */
export function paymentTypeWord(lang: 'en' | 'id', type: string | null | undefined): string {
  const words: Readonly<Record<string, string>> = PAYMENT_TYPE_WORDS[lang];
  const key = (type ?? '').trim().toLowerCase() || 'unknown';
  return Object.hasOwn(words, key) ? (words[key] ?? key) : OTHER[lang].replace('{code}', key);
}
