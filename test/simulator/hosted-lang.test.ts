/**
 * The hosted pages in English and Bahasa Indonesia (`?lang=`, the paylink_lang cookie,
 * Accept-Language, English by default), and the QRIS page's QR code drawn as inline SVG.
 */
import { createHash } from 'node:crypto';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTED } from '../../simulator/i18n/hosted.js';
import type { RunningSimulator } from '../../simulator/index.js';
import { call, oid, s, start } from './helpers.js';

const CLIENT_KEY = 'SB-Mid-client-lang-test';
let sim: RunningSimulator;
beforeAll(async () => {
  sim = await start({ clientKey: CLIENT_KEY });
});
afterAll(async () => {
  await sim.close();
});

const MONTHS_EN = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const MONTHS_ID = [
  'Januari',
  'Februari',
  'Maret',
  'April',
  'Mei',
  'Juni',
  'Juli',
  'Agustus',
  'September',
  'Oktober',
  'November',
  'Desember',
];

async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; html: string; headers: Headers }> {
  const r = await fetch(url, { headers, redirect: 'manual' });
  return { status: r.status, html: await r.text(), headers: r.headers };
}

async function post(
  url: string,
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, { method: 'POST', headers, body: new URLSearchParams(form), redirect: 'manual' });
}

async function newLink(
  methods = ['bca_va', 'other_qris', 'credit_card', 'alfamart', 'gopay'],
): Promise<{ orderId: string; url: string }> {
  const orderId = oid('LG');
  const r = await call(sim.baseUrl, 'POST', '/v1/payment-links', {
    body: {
      transaction_details: { order_id: orderId, gross_amount: 150000 },
      item_details: [{ id: 'x', name: 'Kopi', price: 75000, quantity: 2 }],
      enabled_payments: methods,
    },
  });
  expect(r.status).toBe(200);
  return { orderId, url: s(r.body.payment_url) };
}

/** Chooses a method on a link page and answers the URL of its instructions page. */
async function choose(url: string, method: string): Promise<string> {
  const r = await post(url, { method });
  expect(r.status).toBe(303);
  return new URL(s(r.headers.get('location')), url).toString();
}

/** What a reader sees: the text outside tags (styles and the QR drawing dropped), plus labels in attributes. */
function visibleText(html: string): string {
  const labels = [...html.matchAll(/aria-label="([^"]*)"/g)].map((m) => m[1]).join(' ');
  const text = html
    .replace(/<style>[\s\S]*?<\/style>/g, ' ')
    .replace(/<svg[\s\S]*?<\/svg>/g, ' ')
    .replace(/<[^>]+>/g, ' ');
  return `${text} ${labels}`
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
    .replace(/\s+/g, ' ');
}

/** The literal parts of the English messages that differ in Indonesian (placeholders cut out). */
const ENGLISH_ONLY = Object.entries(HOSTED.en)
  .filter(([k, v]) => HOSTED.id[k as keyof typeof HOSTED.id] !== v)
  .flatMap(([, v]) => v.split(/\{\w+\}/).map((part) => part.replace(/[():,.]/g, ' ').trim()))
  .filter((part) => part.length >= 4);
/** English words of a payment page, whether or not a catalogue holds them. */
const ENGLISH_WORDS =
  /\b(Pay|Payment|Order|Choose|Thank|Transaction|Card|Price|Qty|Item|Wallet|Approve|Virtual account number|One-time|Sandbox card|not found|does not exist)\b/i;

function expectIndonesian(html: string): void {
  expect(html).toMatch(/^<!doctype html><html lang="id">/);
  // Brand names (GoPay, ShopeePay, "Virtual Account" of a bank, Mandiri Bill Payment) stay as they are.
  const text = visibleText(html).replace(/GoPay|ShopeePay|[A-Z]+ Virtual Account|Mandiri Bill Payment|Midtrans/g, '');
  for (const part of ENGLISH_ONLY) expect(text, `English "${part}" on an Indonesian page`).not.toContain(part);
  expect(text).not.toMatch(ENGLISH_WORDS);
}

describe("the hosted pages' catalogue", () => {
  it('has no empty message, and each message has the same placeholders in both languages', () => {
    const holes = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();
    for (const [key, en] of Object.entries(HOSTED.en)) {
      const id = HOSTED.id[key as keyof typeof HOSTED.id];
      expect(en.trim(), key).not.toBe('');
      expect(id.trim(), key).not.toBe('');
      expect(holes(id), key).toEqual(holes(en));
    }
  });
});

describe('the language of a hosted page', () => {
  it('is English by default, with <html lang="en"> and a link to Indonesian', async () => {
    const { url } = await newLink();
    const r = await get(url);
    expect(r.status).toBe(200);
    expect(r.html).toMatch(/^<!doctype html><html lang="en">/);
    expect(r.html).toContain('<h2>Choose a payment method</h2>');
    expect(r.html).toContain('<a href="?lang=id" hreflang="id" lang="id" data-lang="id">Bahasa Indonesia</a>');
    expect(r.html).toContain('Rp 150.000');
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(r.headers.get('vary')).toMatch(/Accept-Language/);
  });

  it('?lang=id answers in Indonesian and remembers it in the paylink_lang cookie for the next page', async () => {
    const { url } = await newLink();
    const r = await get(`${url}?lang=id`);
    expect(r.status).toBe(200);
    expectIndonesian(r.html);
    expect(r.html).toContain('<h2>Pilih metode pembayaran</h2>');
    expect(r.html).toContain('<a href="?lang=en" hreflang="en" lang="en" data-lang="en">English</a>');
    expect(r.html).toContain('Rp 150.000');
    expect(r.html).toContain('<th>Harga</th>');
    const cookie = s(r.headers.get('set-cookie'));
    expect(cookie).toMatch(/^paylink_lang=id; Path=\/; Max-Age=\d+; SameSite=Lax$/);
    const jar = cookie.split(';')[0] ?? '';
    // The choice sticks across the flow without ?lang: the choose-method POST and the page after it.
    const next = await post(url, { method: 'bca_va' }, { cookie: jar });
    const instructions = await get(new URL(s(next.headers.get('location')), url).toString(), { cookie: jar });
    expectIndonesian(instructions.html);
    expect(instructions.html).toContain('Nomor virtual account');
    expect(instructions.html).toContain('>Bayar sekarang</button>');
    expect(instructions.headers.get('set-cookie')).toBeNull();
    // ?lang=en overrides the cookie and replaces it.
    const back = await get(`${(await newLink()).url}?lang=en`, { cookie: jar });
    expect(back.html).toMatch(/^<!doctype html><html lang="en">/);
    expect(back.headers.get('set-cookie')).toMatch(/^paylink_lang=en;/);
  });

  it('Accept-Language: id picks Indonesian; the cookie wins over Accept-Language; an unknown ?lang is ignored', async () => {
    const { url } = await newLink();
    expectIndonesian((await get(url, { 'accept-language': 'id-ID,id;q=0.9,en;q=0.5' })).html);
    expect((await get(url, { 'accept-language': 'fr, en;q=0.8, id;q=0.5' })).html).toMatch(/<html lang="en">/);
    expect((await get(url, { 'accept-language': 'id', cookie: 'paylink_lang=en' })).html).toMatch(/<html lang="en">/);
    const odd = await get(`${url}?lang=xx`, { 'accept-language': 'id' });
    expect(odd.status).toBe(200);
    expectIndonesian(odd.html);
    expect(odd.headers.get('set-cookie')).toBeNull();
  });

  it("a hosted path that does not exist answers its 404 page in the person's language, under the pages' CSP", async () => {
    const id = await get(`${sim.baseUrl}/payment-links/no/such/page`, { 'accept-language': 'id' });
    expect(id.status).toBe(404);
    expect(id.html).toMatch(/<html lang="id">/);
    expect(id.html).toContain(HOSTED.id['notFound.page']);
    expect(id.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const en = await get(`${sim.baseUrl}/payment-links/no/such/page?lang=en`, { 'accept-language': 'id' });
    expect(en.html).toContain(HOSTED.en['notFound.page']);
  });

  it('every page of the flow is Indonesian: methods, each kind of instructions, the result and the closed pages', async () => {
    const h = { cookie: 'paylink_lang=id' };
    const { orderId, url } = await newLink();
    expectIndonesian((await get(url, h)).html);
    for (const m of ['bca_va', 'other_qris', 'credit_card', 'alfamart', 'gopay']) {
      const link = await newLink([m]);
      const page = await get(await choose(link.url, m), h);
      expect(page.status).toBe(200);
      expectIndonesian(page.html);
    }
    const pageUrl = await choose(url, 'bca_va');
    const action = /<form method="post" action="([^"]+)"><button id="pay"/.exec((await get(pageUrl, h)).html)?.[1];
    const paid = await post(new URL(s(action), url).toString(), {}, h);
    const result = await get(new URL(s(paid.headers.get('location')), url).toString(), h);
    expectIndonesian(result.html);
    expect(result.html).toContain('<div id="result">Pembayaran berhasil</div>');
    expect(result.html).toContain('(lunas)');
    const used = await get(url, h);
    expect(used.status).toBe(410);
    expectIndonesian(used.html);
    expect(used.html).toContain('Tautan pembayaran ini sudah dibayar.');
    const missing = await get(`${sim.baseUrl}/payment-links/nope`, h);
    expect(missing.status).toBe(404);
    expectIndonesian(missing.html);
    const bad = await post((await newLink(['gopay'])).url, { method: 'bca_va' }, h);
    expect(bad.status).toBe(400);
    expectIndonesian(await bad.text());
    await call(sim.baseUrl, 'DELETE', `/v1/payment-links/${orderId}`);
  });

  it('Snap pages, the 3-D Secure page and the approval pages follow the language too', async () => {
    const h = { 'accept-language': 'id' };
    const snap = await call(sim.baseUrl, 'POST', '/snap/v1/transactions', {
      body: { transaction_details: { order_id: oid('LS'), gross_amount: 20000 } },
    });
    const snapPage = await get(s(snap.body.redirect_url), h);
    expectIndonesian(snapPage.html);
    expect(snapPage.html).toContain('<h1>Pembayaran</h1>');
    expect(snapPage.html).toContain('data-method="credit_card">Kartu kredit/debit</button>');
    expectIndonesian((await get(`${sim.baseUrl}/snap/v3/redirection/00000000-0000-0000-0000-000000000000`, h)).html);

    const year = String(new Date().getUTCFullYear() + 1);
    const q = new URLSearchParams({
      client_key: CLIENT_KEY,
      card_number: '4811111111111114',
      card_exp_month: '12',
      card_exp_year: year,
      card_cvv: '123',
    });
    const tok = await call(sim.baseUrl, 'GET', `/v2/token?${q.toString()}`, { auth: false });
    const card = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: {
        payment_type: 'credit_card',
        transaction_details: { order_id: oid('LC'), gross_amount: 25000 },
        credit_card: { token_id: s(tok.body.token_id), authentication: true },
      },
    });
    const threeDs = await get(s(card.body.redirect_url), h);
    expectIndonesian(threeDs.html);
    expect(threeDs.html).toContain('<h1>Autentikasi 3D Secure</h1>');
    await post(s(card.body.redirect_url), { otp: '000000' });
    const failed = await get(s(card.body.redirect_url), h);
    expectIndonesian(failed.html);
    expect(failed.html).toContain('Pembayaran gagal');

    const kredivo = await call(sim.baseUrl, 'POST', '/v2/charge', {
      body: { payment_type: 'kredivo', transaction_details: { order_id: oid('LK'), gross_amount: 30000 } },
    });
    const approve = await get(s(kredivo.body.redirect_url), h);
    expectIndonesian(approve.html);
    expect(approve.html).toContain('<title>Bayar dengan Kredivo</title>');
  });

  it('the pay-before time reads "WIB" in both languages, with the date written the language\'s way', async () => {
    const { url } = await newLink(['bca_va']);
    const pageUrl = await choose(url, 'bca_va');
    const orderId = s(/id="order-id">([^<]+)</.exec((await get(pageUrl)).html)?.[1]);
    const status = await call(sim.baseUrl, 'GET', `/v2/${orderId}/status`);
    // Core's expiry_time is Jakarta wall-clock time: "YYYY-MM-DD HH:mm:ss".
    const [, y, mo, d, hh, mm] =
      /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):\d{2}$/.exec(s(status.body.expiry_time)) ?? [];
    const day = String(Number(d));
    const month = Number(mo) - 1;
    const en = await get(pageUrl);
    expect(en.html).toContain(
      `<p class="muted" id="expiry">Pay before ${day} ${MONTHS_EN[month]} ${y}, ${hh}:${mm} WIB</p>`,
    );
    const id = await get(pageUrl, { cookie: 'paylink_lang=id' });
    expect(id.html).toContain(
      `<p class="muted" id="expiry">Bayar sebelum ${day} ${MONTHS_ID[month]} ${y} pukul ${hh}.${mm} WIB</p>`,
    );
  });
});

describe('the QRIS page', () => {
  it('draws the qr_string as an inline SVG made by QRCode, and keeps the string small below it for copying', async () => {
    const { url } = await newLink(['other_qris']);
    const pageUrl = await choose(url, 'other_qris');
    const res = await get(pageUrl);
    const html = res.html;
    const orderId = s(/id="order-id">([^<]+)</.exec(html)?.[1]);
    const qrString = s((await call(sim.baseUrl, 'GET', `/v2/${orderId}/status`)).body.qr_string);
    expect(qrString.length).toBeGreaterThan(20);
    const svg = /<div class="qr" id="qr">(<svg[\s\S]*?<\/svg>)<\/div>/.exec(html)?.[1];
    expect(svg).toBeDefined();
    const expected = (await QRCode.toString(qrString, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })).trim();
    expect(s(svg).replace(/ role="img" aria-label="[^"]*"/, '')).toBe(expected);
    expect(s(svg)).toContain('role="img" aria-label="QRIS code: scan it with any QRIS app to pay"');
    // A different string would have drawn a different code.
    expect(expected).not.toBe(
      (await QRCode.toString(`${qrString}0`, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })).trim(),
    );
    expect(html).toContain(`<span class="qr-string" id="qr-string">${qrString}</span>`);
    expect(html).not.toContain('<span class="code">' + qrString);
    // Drawn in the page, not fetched: the policy allows no images and no scripts at all.
    expect(html).not.toMatch(/<(img|script|link|object|iframe)\b/);
    const csp = s(res.headers.get('content-security-policy'));
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/]+=*'; form-action 'self'; base-uri 'none'$/,
    );
    const style = s(/<style>([\s\S]*?)<\/style>/.exec(html)?.[1]);
    expect(csp).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
  });
});
