/**
 * The runtime configuration as a form. Saving takes the path `POST /api/config` takes (its schema,
 * then the same domain action), so the checks, the messages and the audit line are the API's.
 */
import { html, type Html } from './html.js';
import type { View } from './view.js';
import { consoleMessages, type ConsoleKey } from './i18n/console.js';

type Doc = Record<string, Record<string, unknown>>;

interface Field {
  section: string;
  /** A field one level down (`gateway.snap_bi.client_id`): its object in the section. */
  group?: string;
  name: string;
  /**
   * `number`: a fraction allowed, typed with `.` or the Indonesian decimal `,`. `pem`: a key in
   * several lines; `secret_pem` a write-only one. `exact`: kept as typed, spaces included (the
   * BI-SNAP partnerServiceId is left-padded with spaces).
   */
  kind:
    'text' | 'url' | 'secret' | 'int' | 'number' | 'bool' | 'mode' | 'format' | 'list' | 'pem' | 'secret_pem' | 'exact';
}

/** `section.name`, or `section.group.name`: the form field's name and the API's error path. */
const keyOf = (f: Field) => (f.group ? `${f.section}.${f.group}.${f.name}` : `${f.section}.${f.name}`);
/** Where the field's object is in a document (its section, or its group within it). */
const legendOf = (f: Field) => (f.group ? `${f.section}.${f.group}` : f.section);
function holder(doc: Record<string, unknown>, f: Field): Record<string, unknown> | undefined {
  const s = doc[f.section];
  if (s === null || typeof s !== 'object') return undefined;
  if (!f.group) return s as Record<string, unknown>;
  const g = (s as Record<string, unknown>)[f.group];
  return g !== null && typeof g === 'object' ? (g as Record<string, unknown>) : undefined;
}

export const FIELDS: Field[] = [
  { section: 'gateway', name: 'mode', kind: 'mode' },
  { section: 'gateway', name: 'server_key', kind: 'secret' },
  { section: 'gateway', name: 'client_key', kind: 'secret' },
  { section: 'gateway', name: 'api_base_url', kind: 'url' },
  { section: 'gateway', name: 'app_base_url', kind: 'url' },
  { section: 'gateway', name: 'confirm_notifications', kind: 'bool' },
  { section: 'gateway', group: 'snap_bi', name: 'methods', kind: 'list' },
  { section: 'gateway', group: 'snap_bi', name: 'client_id', kind: 'text' },
  { section: 'gateway', group: 'snap_bi', name: 'client_secret', kind: 'secret' },
  { section: 'gateway', group: 'snap_bi', name: 'partner_id', kind: 'text' },
  { section: 'gateway', group: 'snap_bi', name: 'channel_id', kind: 'text' },
  { section: 'gateway', group: 'snap_bi', name: 'partner_service_id', kind: 'exact' },
  { section: 'gateway', group: 'snap_bi', name: 'private_key', kind: 'secret_pem' },
  { section: 'gateway', group: 'snap_bi', name: 'public_key', kind: 'pem' },
  { section: 'gateway', group: 'snap_bi', name: 'base_url', kind: 'url' },
  { section: 'erp', name: 'notify_url', kind: 'url' },
  { section: 'erp', name: 'webhook_secret', kind: 'secret' },
  { section: 'erp', name: 'timeout_ms', kind: 'int' },
  { section: 'erp', name: 'retry_for_hours', kind: 'number' },
  { section: 'erp', name: 'max_rate_per_s', kind: 'number' },
  { section: 'links', name: 'default_expiry_minutes', kind: 'int' },
  { section: 'links', name: 'enabled_payments', kind: 'list' },
  { section: 'reconcile', name: 'interval_s', kind: 'int' },
  { section: 'reconcile', name: 'pending_after_minutes', kind: 'int' },
  { section: 'retention', name: 'days', kind: 'int' },
  { section: 'alerts', name: 'url', kind: 'url' },
  { section: 'alerts', name: 'secret', kind: 'secret' },
  { section: 'alerts', name: 'format', kind: 'format' },
  { section: 'alerts', name: 'stuck_pending_after_minutes', kind: 'number' },
  { section: 'alerts', name: 'erp_failing_after_minutes', kind: 'number' },
];

/** A field's label and hint (`cfg_<section>.<name>`, `hint_<section>.<name>`) in the page's language. */
function words(f: Field, v: View): { label: string; hint?: string } {
  const key = keyOf(f);
  const label = `cfg_${key}`;
  const hint = `hint_${key}`;
  const has = (k: string): k is ConsoleKey => Object.hasOwn(consoleMessages.en, k);
  return { label: has(label) ? v.t(label) : key, ...(has(hint) ? { hint: v.t(hint) } : {}) };
}

const SECTION_TITLES: Record<string, ConsoleKey> = {
  gateway: 'cfg_sec_gateway',
  'gateway.snap_bi': 'cfg_sec_snap_bi',
  erp: 'cfg_sec_erp',
  links: 'cfg_sec_links',
  reconcile: 'cfg_sec_reconcile',
  retention: 'cfg_sec_retention',
  alerts: 'cfg_sec_alerts',
};

const fieldId = (f: Field) => `cfg-${keyOf(f).replaceAll('.', '-')}`;
const str = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : Array.isArray(v) ? v.join(', ') : '';

function input(f: Field, value: unknown, error: string | undefined, v: View): Html {
  const { label, hint } = words(f, v);
  const id = fieldId(f);
  const name = keyOf(f);
  const described = error || hint ? html` aria-describedby="${id}-help"` : '';
  const invalid = error ? html` aria-invalid="true"` : '';
  const help =
    error || hint ? html`<span id="${id}-help" class="${error ? 'field-error' : 'muted'}">${error ?? hint}</span>` : '';
  switch (f.kind) {
    case 'bool':
      return html`<label class="inline" for="${id}"><input type="hidden" name="${name}" value="false"><input type="checkbox" id="${id}" name="${name}" value="true"${value === true ? html` checked` : ''}${described}${invalid}>${label}</label>${help}`;
    case 'mode':
      return html`<label for="${id}">${label}<select id="${id}" name="${name}"${described}${invalid}>${['simulator', 'sandbox', 'production'].map((m) => html`<option${m === value ? html` selected` : ''}>${m}</option>`)}</select></label>${help}`;
    case 'format':
      return html`<label for="${id}">${label}<select id="${id}" name="${name}"${described}${invalid}>${['json', 'slack'].map((m) => html`<option${m === value ? html` selected` : ''}>${m}</option>`)}</select></label>${help}`;
    case 'secret':
      return html`<label for="${id}">${label}<input type="password" id="${id}" name="${name}" autocomplete="off" placeholder="${value === null ? v.t('cfg_not_set') : v.t('cfg_keep', { value: str(value) })}" maxlength="512"${described}${invalid}></label>${help}`;
    case 'secret_pem':
      return html`<label for="${id}">${label}<textarea id="${id}" name="${name}" rows="3" autocomplete="off" placeholder="${value === null ? v.t('cfg_not_set') : v.t('cfg_keep', { value: str(value) })}" maxlength="16384"${described}${invalid}></textarea></label>${help}`;
    case 'pem':
      return html`<label for="${id}">${label}<textarea id="${id}" name="${name}" rows="3" maxlength="16384"${described}${invalid}>${str(value)}</textarea></label>${help}`;
    case 'int':
      return html`<label for="${id}">${label}<input id="${id}" name="${name}" inputmode="numeric" value="${str(value)}" maxlength="12"${described}${invalid}></label>${help}`;
    case 'number':
      return html`<label for="${id}">${label}<input id="${id}" name="${name}" inputmode="decimal" value="${str(value)}" maxlength="16"${described}${invalid}></label>${help}`;
    default:
      return html`<label for="${id}">${label}<input id="${id}" name="${name}" value="${str(value)}" maxlength="2048"${f.kind === 'url' ? html` type="url"` : ''}${described}${invalid}></label>${help}`;
  }
}

export function configForm(
  doc: Doc,
  token: string,
  errors: Map<string, string>,
  v: View,
  submitted?: Record<string, string>,
  editable = true,
): Html {
  const sections = [...new Set(FIELDS.map(legendOf))];
  const valueOf = (f: Field) => {
    const key = keyOf(f);
    if (submitted && key in submitted && f.kind !== 'secret' && f.kind !== 'secret_pem')
      return f.kind === 'bool' ? submitted[key] === 'true' : submitted[key];
    return holder(doc, f)?.[f.name] ?? null;
  };
  const info = doc.info ?? {};
  return html`
<p class="muted">${v.t('cfg_intro', { version: str(info.config_version) })}${info.updated_by ? html` ${v.t('cfg_changed_by', { who: str(info.updated_by) })}` : ''}</p>
<form method="post" action="/console/config" novalidate>
${editable ? html`<input type="hidden" name="_csrf" value="${token}">` : html`<p class="muted" data-read-only>${v.t('cfg_read_only')}</p>`}
${sections.map(
  (s) =>
    html`<fieldset><legend>${SECTION_TITLES[s] ? v.t(SECTION_TITLES[s]) : s}</legend>${FIELDS.filter((f) => legendOf(f) === s).map((f) => html`<div>${input(f, valueOf(f), errors.get(keyOf(f)), v)}</div>`)}</fieldset>`,
)}
${editable ? html`<button type="submit">${v.t('cfg_save')}</button>` : ''}
</form>`;
}

/** The form as a configuration patch: values typed as the API expects where they look right, so the API's own schema and messages judge the rest. */
export function patchFromForm(form: Record<string, string>, current: Doc): Record<string, Record<string, unknown>> {
  const patch: Record<string, Record<string, unknown>> = {};
  for (const f of FIELDS) {
    const raw = form[keyOf(f)];
    if (raw === undefined) continue;
    // A textarea sends CRLF line ends; a key's trailing newline is not part of it.
    const v = f.kind === 'exact' ? raw : raw.replace(/\r\n/g, '\n').trim();
    let value: unknown;
    if (f.kind === 'secret' || f.kind === 'secret_pem') {
      if (v === '') continue;
      value = v;
    } else if (f.kind === 'bool') value = v === 'true';
    else if (f.kind === 'int') value = /^-?\d{1,15}$/.test(v) ? Number(v) : v === '' ? null : v;
    else if (f.kind === 'number')
      value = /^-?\d{1,9}(?:[.,]\d{1,6})?$/.test(v) ? Number(v.replace(',', '.')) : v === '' ? null : v;
    else if (f.kind === 'list')
      value =
        v === ''
          ? []
          : v
              .split(',')
              .map((x) => x.trim())
              .filter((x) => x !== '');
    else value = v === '' ? null : v;
    const held = holder(current, f)?.[f.name];
    const before = f.kind === 'pem' && typeof held === 'string' ? held.trim() : held;
    if (JSON.stringify(before ?? null) === JSON.stringify(value)) continue;
    const section = (patch[f.section] ??= {});
    if (!f.group) section[f.name] = value;
    else ((section[f.group] ??= {}) as Record<string, unknown>)[f.name] = value;
  }
  return patch;
}
