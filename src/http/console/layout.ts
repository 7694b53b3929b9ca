import { html, type Html } from './html.js';
import { EMPTY, type View } from './view.js';

export const NAV = [
  ['overview', '/console', 'nav_overview'],
  ['transactions', '/console/transactions', 'nav_transactions'],
  ['deliveries', '/console/deliveries', 'nav_deliveries'],
  ['reconciliation', '/console/reconciliation', 'nav_reconciliation'],
  ['logs', '/console/logs', 'nav_logs'],
  ['config', '/console/config', 'nav_config'],
  ['operators', '/console/operators', 'nav_operators'],
  ['docs', '/docs', 'nav_docs'],
] as const;

/** Sections only an admin is shown (others are refused there anyway). */
const ADMIN_SECTIONS: ReadonlySet<Section> = new Set(['operators']);

export type Section = (typeof NAV)[number][0];

export interface Alert {
  kind: 'ok' | 'error';
  text: string;
  /** Field messages (validation errors), shown as a list. */
  items?: string[];
}

export function alertBox(a: Alert | undefined): Html {
  if (!a) return html``;
  return html`<div class="alert ${a.kind}" role="${a.kind === 'error' ? 'alert' : 'status'}"><p>${a.text}</p>${a.items && a.items.length > 0 ? html`<ul>${a.items.map((i) => html`<li>${i}</li>`)}</ul>` : ''}</div>`;
}

/** `here` with `lang` set to each language: the toggle's links (the choice is then remembered by the cookie). */
function langLinks(here: string, v: View): Html {
  const url = new URL(here, 'http://console.invalid');
  const link = (lang: 'en' | 'id', label: string) => {
    url.searchParams.set('lang', lang);
    return html`<a href="${url.pathname}${url.search}" hreflang="${lang}" lang="${lang}"${lang === v.lang ? html` aria-current="true"` : ''}>${label}</a>`;
  };
  return html`<nav class="langs" aria-label="${v.t('language')}">${link('en', 'English')} · ${link('id', 'Bahasa Indonesia')}</nav>`;
}

function roleWord(v: View, role: string): string {
  return role === 'viewer' || role === 'finance' || role === 'admin' ? v.t(`role_${role}`) : role;
}

export function page(o: {
  title: string;
  section: Section;
  body: Html;
  user?: string;
  /** The signed-in operator's role, shown beside the name. */
  role?: string;
  /** Signed in with the session cookie: a sign-out button is shown. */
  signOut?: boolean;
  /** The operator is an admin: the admin's sections are in the menu. */
  admin?: boolean;
  view: View;
  here: string;
  alert?: Alert;
  /** The gateway is the simulator: a banner says that no money moves. */
  simulator?: boolean;
}): string {
  const { t } = o.view;
  return html`<!doctype html>
<html lang="${o.view.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${o.title} · ${t('console_name')}</title>
<link rel="stylesheet" href="/console/assets/console.css">
<script src="/console/assets/console.js" defer></script>
</head>
<body>
<a class="skip" href="#main">${t('skip')}</a>
${o.simulator ? html`<p class="sim-banner" role="note" data-simulator>${t('simulator_banner')}</p>` : ''}
<header>
<nav aria-label="${t('nav_label')}">
<span class="brand">paylink</span>
<ul>${NAV.filter(([key]) => o.admin === true || !ADMIN_SECTIONS.has(key)).map(([key, href, label]) => html`<li><a href="${href}"${key === o.section ? html` aria-current="page"` : ''}>${t(label)}</a></li>`)}</ul>
</nav>
<p class="who">${o.user ? html`${t('signed_in_as')} <strong>${o.user}</strong>${o.role ? html` <span data-role="${o.role}">(${roleWord(o.view, o.role)})</span>` : ''} · ` : ''}${o.signOut ? html`<form method="post" action="/sign-out" class="inline-form"><button type="submit" class="secondary">${t('sign_out')}</button></form> · ` : ''}<span data-zone="${o.view.timeZone}">${t('times_in', { zone: o.view.zone })}</span></p>
${langLinks(o.here, o.view)}
</header>
<main id="main">
<h1>${o.title}</h1>
${alertBox(o.alert)}
${o.body}
</main>
</body>
</html>`.text;
}

export const CONSOLE_CSS = `
:root{--fg:#1c2330;--muted:#5b6678;--line:#d9dee7;--bg:#f6f7f9;--card:#fff;--accent:#0b5cad;--ok:#17643a;--bad:#a8201a;--warn:#8a5a00;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}body{margin:0;color:var(--fg);background:var(--bg);font-size:15px;line-height:1.45}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:10}
header{background:#12263f;color:#fff;padding:8px 16px}header a{color:#dce8f7}
nav{display:flex;flex-wrap:wrap;align-items:center;gap:4px 16px}nav ul{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;margin:0;padding:0}
nav a{text-decoration:none;padding:4px 2px;display:inline-block}nav a[aria-current=page]{color:#fff;border-bottom:2px solid #fff;font-weight:600}
.brand{font-weight:700;letter-spacing:.02em}.who{margin:4px 0 0;font-size:13px;color:#b8c7da}
main{padding:12px 16px 40px;max-width:1200px;margin:0 auto}h1{font-size:22px;margin:8px 0 12px}h2{font-size:17px;margin:20px 0 8px}
a{color:var(--accent)}a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #f0b400;outline-offset:1px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(220px,1fr));gap:12px}.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px 12px}
.card h2{margin-top:0}dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:0}dl.kv dt{color:var(--muted)}dl.kv dd{margin:0;overflow-wrap:anywhere}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:6px}
table{border-collapse:collapse;width:100%;font-size:14px}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}th{background:#eef1f5;font-weight:600}
td.num,th.num{text-align:right;white-space:nowrap}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px;overflow-wrap:anywhere}
.badge{display:inline-block;padding:1px 7px;border-radius:10px;font-size:12px;font-weight:600;background:#e6eaf0;white-space:nowrap}
.s-paid,.s-delivered,.s-applied,.s-approved{background:#d9f0e1;color:var(--ok)}.s-failed,.s-dead,.s-expired,.s-cancelled,.s-refused,.s-unverified{background:#f8dedd;color:var(--bad)}
.s-pending,.s-requested,.s-stale{background:#fbeccc;color:var(--warn)}
.s-partially_refunded,.s-refunded{background:#e8e1f7;color:#4b2a8c}
.r-applied{background:#d9f0e1;color:var(--ok)}.r-unverified,.r-unknown_status{background:#f8dedd;color:var(--bad)}
.l-trace,.l-debug{background:#e6eaf0;color:var(--muted)}.l-info{background:#dde9f9;color:#0b4a8c}.l-warn{background:#fbeccc;color:var(--warn)}.l-error{background:#f8dedd;color:var(--bad)}.l-fatal{background:var(--bad);color:#fff}
.langs{margin-top:4px;font-size:13px}.langs a[aria-current]{font-weight:700;color:#fff}
.confirm{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:12px;max-width:640px}.confirm form{display:flex;flex-wrap:wrap;gap:12px;align-items:center;margin-top:10px}
.qr{background:#fff;display:inline-block;padding:4px;border:1px solid var(--line);border-radius:6px}.qr svg{width:200px;height:200px;display:block}
form.filters{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end;margin:0 0 12px}
label{display:flex;flex-direction:column;font-size:13px;color:var(--muted);gap:2px}label.inline{flex-direction:row;align-items:center;gap:6px;color:var(--fg)}
input,select,textarea,button{font:inherit;padding:6px 8px;border:1px solid #9aa5b4;border-radius:4px;background:#fff;color:var(--fg);min-height:36px;max-width:100%}
button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--bad);border-color:var(--bad)}
.actions{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:12px}.actions form{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:10px;display:flex;flex-direction:column;gap:8px}
.actions h3{margin:0;font-size:15px}.alert{border-radius:6px;padding:8px 12px;margin:0 0 12px;border:1px solid}.alert p{margin:0}.alert.ok{background:#e5f5ea;border-color:#9fd3b0}.alert.error{background:#fbe7e6;border-color:#e7a6a2}
.field-error{color:var(--bad);font-size:13px}fieldset{border:1px solid var(--line);border-radius:6px;background:var(--card);margin:0 0 12px;padding:8px 12px;display:grid;gap:10px;grid-template-columns:repeat(auto-fit,minmax(260px,1fr))}legend{font-weight:600;padding:0 4px}
.pager{display:flex;gap:16px;margin:10px 0}.muted{color:var(--muted)}ol.timeline{list-style:none;padding:0;margin:0;border-left:3px solid var(--line)}
ol.timeline li{position:relative;padding:6px 0 8px 14px}ol.timeline li::before{content:"";position:absolute;left:-8px;top:11px;width:12px;height:12px;border-radius:50%;background:var(--accent)}
ol.timeline .t{font-size:13px;color:var(--muted);display:block}pre.log{white-space:pre-wrap;overflow-wrap:anywhere;background:#0f1722;color:#dde6f0;padding:10px;border-radius:6px;font-size:12px;max-height:70vh;overflow:auto}
.copy-row{display:flex;gap:6px;flex-wrap:wrap}.copy-row input{flex:1 1 200px}
ul.by-order{list-style:none;padding:0;margin:0 0 12px;display:grid;gap:6px}ul.by-order li{display:flex;flex-wrap:wrap;align-items:center;gap:6px 10px}form.inline-form{display:inline;margin:0}
.card.money h3{font-size:14px;font-weight:600;color:var(--muted);margin:0 0 2px}.card.money p{margin:0 0 6px}.card.money strong[data-money]{font-size:28px;line-height:1.2;font-variant-numeric:tabular-nums}.card.money dl.kv{font-size:14px}
.nowrap{white-space:nowrap}details.raw{margin-top:2px;font-size:13px}details.raw summary{cursor:pointer;color:var(--accent)}details.raw pre.log{max-height:40vh}.log-msg{font-weight:500}
.downloads{margin-top:16px}.downloads label{max-width:100%;min-width:0}.downloads select{width:100%}.downloads h2{margin-top:0}.sim-banner{margin:0;background:#fff4d6;color:#5c3d00;border-bottom:1px solid #e8c66a;padding:6px 16px;font-weight:600;text-align:center}
.chart-narrow{display:none}th.num{white-space:normal}table.counts .badge{white-space:normal}
@media (max-width:600px){main{padding:10px}th,td{padding:5px}.hide-narrow{display:none}.chart-wide{display:none}.chart-narrow{display:block}}
@media (max-width:600px){.table-wrap table{font-size:13px}.table-wrap th,.table-wrap td{padding:4px}.table-wrap .badge{white-space:normal}.table-wrap th.num{overflow-wrap:anywhere;font-size:12px;min-width:4.2em}
table.tx-list td.num{white-space:normal}table.tx-list td:first-child{min-width:6em}}
`;

/** The console's only script: the copy button. No inline script anywhere (the CSP forbids it). */
export const CONSOLE_JS = `
document.addEventListener('click', function (ev) {
  var t = ev.target;
  if (!(t instanceof HTMLElement) || !t.matches('button[data-copy]')) return;
  var input = document.getElementById(t.getAttribute('data-copy'));
  if (!input) return;
  input.select();
  var label = t.textContent;
  var done = function () { t.textContent = t.getAttribute('data-copied') || label; setTimeout(function () { t.textContent = label; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand('copy'); done(); });
  else { document.execCommand('copy'); done(); }
});
`;

/** A status (of a payment, an ERP event, a delivery attempt, a refund…) as a coloured word. */
export function statusBadge(v: View, s: string | null | undefined): Html {
  if (!s) return html`<span class="badge">${EMPTY}</span>`;
  return html`<span class="badge s-${s.replace(/[^a-z_]/g, '')}" data-value="${s}">${v.word('st', s)}</span>`;
}

/** A log level as a coloured word of its own (not a payment status's colours). */
export function levelBadge(v: View, level: string): Html {
  return html`<span class="badge l-${level.replace(/[^a-z]/g, '')}" data-level="${level}">${v.word('lv', level)}</span>`;
}
