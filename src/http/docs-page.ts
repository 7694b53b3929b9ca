import { ERRORS, type ErrorCode } from '../errors.js';

/**
 * `/docs`: a server-rendered reference built from the OpenAPI document, with no script and no
 * asset from the internet. Problem `type`s point at `/docs#error-CODE`, so every catalogue entry
 * has that anchor.
 */

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options', 'head', 'trace'];

interface Op {
  method: string;
  path: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Array<{ name?: string; in?: string; required?: boolean; description?: string; schema?: unknown }>;
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; $ref?: string }>;
  'x-auth'?: string;
}

type Doc = { info?: { title?: string; version?: string; description?: string }; paths?: Record<string, Record<string, unknown>>; tags?: Array<{ name: string; description?: string }> };

function operations(doc: Doc): Op[] {
  const out: Op[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (op && typeof op === 'object') out.push({ ...(op as Omit<Op, 'method' | 'path'>), method: method.toUpperCase(), path });
    }
  }
  return out;
}

const anchor = (op: Op) => `op-${op.method.toLowerCase()}-${op.path.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
const AUTH: Record<string, string> = { op: 'operator Basic Auth', key: 'API key', sig: 'gateway signature', none: 'none' };

function renderOp(op: Op): string {
  const params = (op.parameters ?? [])
    .map((p) => `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${esc(JSON.stringify(p.schema ?? {}))}</code> ${esc(p.description ?? '')}</td></tr>`)
    .join('');
  const body = Object.entries(op.requestBody?.content ?? {})
    .map(([type, c]) => `<h4>Body (${esc(type)})</h4><pre>${esc(JSON.stringify(c.schema ?? {}, null, 2))}</pre>`)
    .join('');
  const responses = Object.entries(op.responses ?? {})
    .map(([status, r]) => `<li><strong>${esc(status)}</strong> ${esc(r.description ?? (r.$ref ? r.$ref.split('/').pop() : ''))}</li>`)
    .join('');
  return `<section class="op" id="${esc(anchor(op))}">
<h3><span class="m">${esc(op.method)}</span> <code>${esc(op.path)}</code></h3>
<p>${esc(op.summary ?? '')}${op['x-auth'] ? ` — auth: ${esc(AUTH[op['x-auth']] ?? op['x-auth'])}` : ''}</p>
${op.description ? `<p>${esc(op.description)}</p>` : ''}
${params ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>required</th><th>schema</th></tr>${params}</table>` : ''}
${body}
<h4>Responses</h4><ul>${responses}</ul>
</section>`;
}

function renderErrors(): string {
  const rows = (Object.keys(ERRORS) as ErrorCode[])
    .map((code) => `<tr id="error-${esc(code)}"><td><code>${esc(code)}</code></td><td>${ERRORS[code].status}</td><td>${esc(ERRORS[code].title)}</td><td>${esc(ERRORS[code].doc)}</td></tr>`)
    .join('');
  return `<h2 id="errors">Error catalogue</h2>
<p>Every error is <code>application/problem+json</code>: <code>{type, title, status, detail, code, request_id, errors?, gateway?}</code>; <code>type</code> links here.</p>
<table><tr><th>code</th><th>status</th><th>title</th><th>meaning</th></tr>${rows}</table>`;
}

export function renderDocsPage(doc: Doc): string {
  const ops = operations(doc);
  const tags = [...(doc.tags ?? []).map((t) => t.name), ...new Set(ops.flatMap((o) => o.tags ?? []))].filter((t, i, a) => a.indexOf(t) === i);
  const byTag = tags
    .map((tag) => {
      const mine = ops.filter((o) => (o.tags ?? []).includes(tag));
      if (mine.length === 0) return '';
      const desc = doc.tags?.find((t) => t.name === tag)?.description;
      return `<h2>${esc(tag)}</h2>${desc ? `<p>${esc(desc)}</p>` : ''}${mine.map(renderOp).join('\n')}`;
    })
    .join('\n');
  const untagged = ops.filter((o) => (o.tags ?? []).length === 0);
  const toc = ops.map((o) => `<li><a href="#${esc(anchor(o))}">${esc(o.method)} ${esc(o.path)}</a></li>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info?.title ?? 'API')} reference</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.6rem;overflow:auto;max-height:24rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}.m{display:inline-block;min-width:4.5rem;font-weight:bold}.op{border-top:1px solid #ddd;padding-top:.5rem}tr:target,section:target{background:#fff7d6}</style>
</head><body>
<h1>${esc(doc.info?.title ?? 'API')} ${esc(doc.info?.version ?? '')}</h1>
<p>${esc(doc.info?.description ?? '')}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). <a href="#errors">Error catalogue</a>.</p>
<nav><ul>${toc}</ul></nav>
${byTag}
${untagged.length > 0 ? `<h2>Other</h2>${untagged.map(renderOp).join('\n')}` : ''}
${renderErrors()}
</body></html>`;
}
