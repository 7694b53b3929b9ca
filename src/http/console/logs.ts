import type { Deps } from '../../types.js';
import { decodeLogCursor, queryLogs } from '../../platform/logging/query.js';
import { TAIL_MAX_LINES, listLogFiles, tailLogFile } from '../../platform/logging/files.js';
import { openLogFile } from '../../domain/queries/log-files.js';
import type { Actor } from '../../domain/audit.js';
import { html, type Html } from './html.js';
import { levelBadge, type Alert } from './layout.js';
import type { View } from './view.js';
import { txLink } from './transactions.js';

export interface LogsQuery {
  q?: string;
  level?: string;
  order_id?: string;
  request_id?: string;
  cursor?: string;
  /** `1`: the console's own page loads are listed too. */
  console?: string;
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const s = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The request an access line is about (`request completed`), as its method, path and answer. */
function requestOf(
  e: Record<string, unknown>,
): { method: string; url: string; status?: number; ms?: number } | undefined {
  const req = e.req !== null && typeof e.req === 'object' ? (e.req as Record<string, unknown>) : undefined;
  const res = e.res !== null && typeof e.res === 'object' ? (e.res as Record<string, unknown>) : undefined;
  const url = s(req?.url);
  if (!req || !url) return undefined;
  return {
    method: s(req.method) ?? '',
    url,
    ...(typeof res?.statusCode === 'number' ? { status: res.statusCode } : {}),
    ...(typeof e.responseTime === 'number' ? { ms: Math.round(e.responseTime) } : {}),
  };
}

/** A load of one of the console's own pages or assets: hidden unless asked for, it is not what an operator looks for. */
export function isConsolePageLoad(e: Record<string, unknown>): boolean {
  const r = requestOf(e);
  return r !== undefined && r.method === 'GET' && /^\/console(?:[/?]|$)/.test(r.url);
}

function entryRow(e: Record<string, unknown>, v: View): Html {
  const level = typeof e.level === 'number' ? (LEVEL_NAMES[e.level] ?? String(e.level)) : (s(e.level) ?? '');
  const requestId = s(e.request_id);
  const orderId = s(e.order_id);
  const r = requestOf(e);
  const { pid: _p, hostname: _h, ...shown } = e;
  return html`<tr data-log-level="${level}"><td class="nowrap">${v.when(s(e.time))}</td><td>${levelBadge(v, level)}</td>
<td><span class="log-msg">${s(e.msg) ?? ''}</span>${r ? html` <code>${r.method} ${r.url.slice(0, 200)}</code>${r.status === undefined ? '' : html` → ${r.status}`}${r.ms === undefined ? '' : html` <span class="muted">${r.ms} ms</span>`}` : ''}
<details class="raw"><summary>${v.t('lg_raw')}</summary>${requestId ? html`<p><a class="mono" href="/console/logs?request_id=${encodeURIComponent(requestId)}">${v.t('lg_same_request')}</a></p>` : ''}<pre class="log">${JSON.stringify(shown, null, 2).slice(0, 8000)}</pre></details></td>
<td>${orderId ? html`<a class="mono" href="${txLink(orderId)}">${orderId}</a>` : ''}</td></tr>`;
}

export async function logsBody(
  services: Deps<'config'>,
  query: LogsQuery,
  v: View,
): Promise<{ body: Html; alert?: Alert }> {
  const { t } = v;
  const dir = services.config.logDir;
  const cursor = query.cursor ? decodeLogCursor(query.cursor) : undefined;
  const level = query.level && LEVELS.includes(query.level) ? query.level : undefined;
  const page = await queryLogs(dir, {
    q: query.q || undefined,
    level,
    order_id: query.order_id || undefined,
    request_id: query.request_id || undefined,
    limit: 100,
    cursor,
    ...(query.console === '1' ? {} : { skip: isConsolePageLoad }),
  });
  const files = await listLogFiles(dir);
  const next = page.next_cursor
    ? new URLSearchParams({
        ...Object.fromEntries(
          Object.entries(query).filter(([k, v]) => k !== 'cursor' && typeof v === 'string' && v !== ''),
        ),
        cursor: page.next_cursor,
      })
    : undefined;
  const body = html`
<form class="filters" method="get" action="/console/logs" role="search">
<label>${t('lg_text')}<input name="q" value="${query.q ?? ''}" maxlength="200"></label>
<label>${t('lg_min_level')}<select name="level"><option value="">${t('any')}</option>${LEVELS.map((l) => html`<option value="${l}"${l === level ? html` selected` : ''}>${v.word('lv', l)}</option>`)}</select></label>
<label>${t('lg_order_id')}<input name="order_id" value="${query.order_id ?? ''}" maxlength="200"></label>
<label>${t('lg_request_id')}<input name="request_id" value="${query.request_id ?? ''}" maxlength="64"></label>
<label class="inline"><input type="checkbox" name="console" value="1"${query.console === '1' ? html` checked` : ''}>${t('lg_show_console')}</label>
<button type="submit">${t('search')}</button>
</form>
<div class="table-wrap"><table><caption class="muted">${t('lg_caption')}</caption>
<thead><tr><th scope="col">${t('lg_time')}</th><th scope="col">${t('lg_level')}</th><th scope="col">${t('lg_message')}</th><th scope="col">${t('lg_order_id')}</th></tr></thead>
<tbody>${page.entries.length === 0 ? html`<tr><td colspan="4" class="muted">${t('lg_none')}</td></tr>` : page.entries.map((e) => entryRow(e, v))}</tbody></table></div>
<nav class="pager" aria-label="${t('pages')}">${next ? html`<a href="/console/logs?${next.toString()}" rel="next">${t('older')}</a>` : ''}</nav>
<h2>${t('lg_files')}</h2>
<ul>${files.slice(0, 30).map((f) => html`<li><a href="/console/logs/view?file=${encodeURIComponent(f.name)}">${f.name}</a> <span class="muted">${Math.ceil(f.size_bytes / 1024)} KiB</span></li>`)}</ul>`;
  return { body, alert: query.cursor && !cursor ? { kind: 'error', text: t('lg_bad_cursor') } : undefined };
}

export async function logFileBody(
  services: Deps<'config' | 'logger'>,
  name: string | undefined,
  actor: Actor,
  v: View,
): Promise<Html | undefined> {
  const { t } = v;
  if (!name) return undefined;
  const file = await openLogFile(services, name, actor);
  if (!file) return undefined;
  const lines = Math.min(500, TAIL_MAX_LINES);
  const { text, truncated } = await tailLogFile(file, lines);
  return html`<p><a href="/console/logs">${t('lg_back')}</a> · ${t('lg_last_lines', { count: lines })}${truncated ? ` ${t('lg_truncated')}` : ''}</p><pre class="log" tabindex="0" aria-label="${t('lg_content_of', { file: name })}">${text.toString('utf8')}</pre>`;
}
