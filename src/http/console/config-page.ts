/**
 * The runtime configuration as a form. Saving takes the path `POST /api/config` takes (its schema,
 * then the same domain action), so the checks, the messages and the audit line are the API's.
 */
import { html, type Html } from './html.js';

type Doc = Record<string, Record<string, unknown>>;

interface Field {
  section: string;
  name: string;
  label: string;
  kind: 'text' | 'url' | 'secret' | 'int' | 'bool' | 'mode' | 'list';
  hint?: string;
}

export const FIELDS: Field[] = [
  { section: 'gateway', name: 'mode', label: 'Gateway mode', kind: 'mode' },
  { section: 'gateway', name: 'server_key', label: 'Server key', kind: 'secret', hint: 'needed again whenever the mode or a gateway URL changes' },
  { section: 'gateway', name: 'client_key', label: 'Client key', kind: 'secret' },
  { section: 'gateway', name: 'api_base_url', label: 'Core / Payment Link API base URL', kind: 'url' },
  { section: 'gateway', name: 'app_base_url', label: 'Snap base URL', kind: 'url' },
  { section: 'gateway', name: 'confirm_notifications', label: 'Confirm every notification with the status API', kind: 'bool' },
  { section: 'erp', name: 'notify_url', label: 'ERP notification URL', kind: 'url', hint: 'empty = events wait in the outbox' },
  { section: 'erp', name: 'webhook_secret', label: 'ERP signing secret', kind: 'secret' },
  { section: 'erp', name: 'timeout_ms', label: 'ERP timeout (ms)', kind: 'int' },
  { section: 'erp', name: 'retry_for_hours', label: 'Retry deliveries for (hours)', kind: 'int' },
  { section: 'links', name: 'default_expiry_minutes', label: 'Default link expiry (minutes)', kind: 'int' },
  { section: 'links', name: 'enabled_payments', label: 'Enabled payment methods', kind: 'list', hint: 'comma-separated; empty = every method' },
  { section: 'reconcile', name: 'interval_s', label: 'Reconcile every (seconds)', kind: 'int' },
  { section: 'reconcile', name: 'pending_after_minutes', label: 'Ask about pending payments after (minutes)', kind: 'int' },
  { section: 'retention', name: 'days', label: 'Keep delivered ERP events and processed notifications for (days)', kind: 'int', hint: '1 to 3650; transactions are never deleted' },
];

const SECTION_TITLES: Record<string, string> = { gateway: 'Gateway', erp: 'ERP delivery', links: 'Payment links', reconcile: 'Reconciliation', retention: 'Retention' };

const fieldId = (f: Field) => `cfg-${f.section}-${f.name}`;
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : Array.isArray(v) ? v.join(', ') : '');

function input(f: Field, value: unknown, error: string | undefined): Html {
  const id = fieldId(f);
  const name = `${f.section}.${f.name}`;
  const described = error || f.hint ? html` aria-describedby="${id}-help"` : '';
  const invalid = error ? html` aria-invalid="true"` : '';
  const help = error || f.hint ? html`<span id="${id}-help" class="${error ? 'field-error' : 'muted'}">${error ?? f.hint}</span>` : '';
  switch (f.kind) {
    case 'bool':
      return html`<label class="inline" for="${id}"><input type="hidden" name="${name}" value="false"><input type="checkbox" id="${id}" name="${name}" value="true"${value === true ? html` checked` : ''}${described}${invalid}>${f.label}</label>${help}`;
    case 'mode':
      return html`<label for="${id}">${f.label}<select id="${id}" name="${name}"${described}${invalid}>${['simulator', 'sandbox', 'production'].map((m) => html`<option${m === value ? html` selected` : ''}>${m}</option>`)}</select></label>${help}`;
    case 'secret':
      return html`<label for="${id}">${f.label}<input type="password" id="${id}" name="${name}" autocomplete="off" placeholder="${value === null ? 'not set' : `${str(value)} (leave empty to keep)`}" maxlength="512"${described}${invalid}></label>${help}`;
    case 'int':
      return html`<label for="${id}">${f.label}<input id="${id}" name="${name}" inputmode="numeric" value="${str(value)}" maxlength="12"${described}${invalid}></label>${help}`;
    default:
      return html`<label for="${id}">${f.label}<input id="${id}" name="${name}" value="${str(value)}" maxlength="2048"${f.kind === 'url' ? html` type="url"` : ''}${described}${invalid}></label>${help}`;
  }
}

export function configForm(doc: Doc, token: string, errors: Map<string, string>, submitted?: Record<string, string>): Html {
  const sections = [...new Set(FIELDS.map((f) => f.section))];
  const valueOf = (f: Field) => {
    const key = `${f.section}.${f.name}`;
    if (submitted && key in submitted && f.kind !== 'secret') return f.kind === 'bool' ? submitted[key] === 'true' : submitted[key];
    return doc[f.section]?.[f.name] ?? null;
  };
  const info = doc.info ?? {};
  return html`
<p class="muted">Stored in the database: every instance uses a change within about a second, and it survives restarts. Secrets are never shown; leave a secret empty to keep it. Version ${str(info.config_version)}${info.updated_by ? html`, last changed by ${str(info.updated_by)}` : ''}.</p>
<form method="post" action="/console/config" novalidate>
<input type="hidden" name="_csrf" value="${token}">
${sections.map(
  (s) => html`<fieldset><legend>${SECTION_TITLES[s] ?? s}</legend>${FIELDS.filter((f) => f.section === s).map((f) => html`<div>${input(f, valueOf(f), errors.get(`${f.section}.${f.name}`))}</div>`)}</fieldset>`,
)}
<button type="submit">Save configuration</button>
</form>`;
}

/** The form as a configuration patch: values typed as the API expects where they look right, so the API's own schema and messages judge the rest. */
export function patchFromForm(form: Record<string, string>, current: Doc): Record<string, Record<string, unknown>> {
  const patch: Record<string, Record<string, unknown>> = {};
  for (const f of FIELDS) {
    const raw = form[`${f.section}.${f.name}`];
    if (raw === undefined) continue;
    const v = raw.trim();
    let value: unknown;
    if (f.kind === 'secret') {
      if (v === '') continue;
      value = v;
    } else if (f.kind === 'bool') value = v === 'true';
    else if (f.kind === 'int') value = /^-?\d{1,15}$/.test(v) ? Number(v) : v === '' ? null : v;
    else if (f.kind === 'list')
      value = v === '' ? [] : v.split(',').map((x) => x.trim()).filter((x) => x !== '');
    else value = v === '' ? null : v;
    const before = current[f.section]?.[f.name];
    if (JSON.stringify(before ?? null) === JSON.stringify(value)) continue;
    (patch[f.section] ??= {})[f.name] = value;
  }
  return patch;
}
