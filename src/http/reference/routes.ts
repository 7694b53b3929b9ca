/**
 * `/openapi.json`, and `/docs`: that description rendered by Scalar's reference (served from its
 * package, see scalar-bundle.ts), both behind the operator credentials or an API key. The
 * renderer mounts on `#reference`: the bundle mounts a second, unconfigured one on an element whose
 * id is `api-reference`. The error catalogue is
 * also rendered on the server below it, so `/docs#error-CODE` (every problem's `type`) lands on it.
 */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../types.js';
import { ERRORS, type ErrorCode } from '../../platform/errors.js';
import { html, type Html } from '../console/html.js';
import { scalarBundle } from './scalar-bundle.js';
import { DOCS_INIT_JS } from './docs-init.js';
import { NoQuery } from '../schemas/common.js';
import { withExample } from '../schemas/examples.js';
import { VERSION } from '../../platform/version.js';

/**
 * Scripts only from this origin and no connection elsewhere; the renderer sets inline styles as it
 * lays the page out, so styles (only styles) may be inline here — unlike the console.
 */
export function docsCsp(): string {
  return `default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'`;
}

/** The catalogue's lines mark code with backticks (markdown, as in the description): shown as code here. */
export function inlineCode(text: string): Html {
  const parts = text.split('`');
  // An unpaired backtick stays a character: only complete pairs become code.
  if (parts.length % 2 === 0) return html`${text}`;
  return html`${parts.map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;
}

function catalogue() {
  return html`<section id="error-catalogue" class="catalogue" aria-labelledby="errors-h">
<h2 id="errors-h">Error catalogue</h2>
<p>Every error is <code>application/problem+json</code> (RFC 9457) with <code>code</code>, <code>detail</code> and <code>request_id</code>; its <code>type</code> links here.</p>
<dl>${(Object.keys(ERRORS) as ErrorCode[]).map((c) => html`<dt id="error-${c}"><code>${c}</code> · ${ERRORS[c].status} ${ERRORS[c].title}</dt><dd>${inlineCode(ERRORS[c].doc)}</dd>`)}</dl>
</section>`;
}

/** The renderer's anchor of a group: its name in lower case, every run of other characters one `-`. */
export function tagSlug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

interface IndexedOperation {
  method: string;
  path: string;
  summary: string;
}

/** The description's operations by group, in the order of its groups (`tags`). */
function operationsByGroup(doc: unknown): Array<[string, IndexedOperation[]]> {
  const d = (typeof doc === 'object' && doc !== null ? doc : {}) as {
    tags?: Array<{ name: string }>;
    paths?: Record<string, Record<string, { tags?: string[]; summary?: string } | undefined>>;
  };
  const groups = new Map<string, IndexedOperation[]>((d.tags ?? []).map((t) => [t.name, []]));
  for (const [path, item] of Object.entries(d.paths ?? {}))
    for (const [method, op] of Object.entries(item)) {
      const group = op?.tags?.[0];
      if (group === undefined || !groups.has(group)) continue;
      groups.get(group)?.push({ method: method.toUpperCase(), path, summary: op?.summary ?? '' });
    }
  return [...groups].filter(([, ops]) => ops.length > 0);
}

/**
 * A compact index above the reference for narrow screens, where the renderer opens on the
 * introduction and hides its sidebar behind a menu: the groups as jumps in view at once, every
 * operation one tap further. It is a template that init.js puts in place on a narrow screen only:
 * wide screens have the renderer's own sidebar, and a second list there would only repeat it.
 */
export function operationIndex(doc: unknown): Html {
  const groups = operationsByGroup(doc);
  return html`<template id="ops-index-template"><nav class="ops-index" aria-label="Operations">
<p class="ops-groups">${groups.map(([name]) => html`<a href="#tag/${tagSlug(name)}">${name}</a>`)}</p>
<details><summary>All operations</summary>${groups.map(
    ([name, ops]) =>
      html`<p class="ops-group">${name}</p><ul>${ops.map(
        (o) =>
          html`<li><a href="#tag/${tagSlug(name)}/${o.method}${o.path}" title="${o.summary}"><code>${o.method}</code> ${o.path}</a></li>`,
      )}</ul>`,
  )}</details>
</nav></template>`;
}

export const referenceRoutes: RoutePlugin = async (app) => {
  app.get(
    '/openapi.json',
    {
      config: { auth: 'doc' },
      schema: {
        tags: [TAGS.logs],
        summary: 'This OpenAPI 3.1 description',
        description:
          'This document (OpenAPI 3.1), which /docs renders. The ERP event is described under `webhooks`; the error catalogue under `x-error-catalogue` (also a section of /docs, anchors `#error-CODE`).',
        querystring: NoQuery,
        response: {
          200: withExample(Type.Object({}, { additionalProperties: true }), {
            openapi: '3.1.0',
            info: { title: 'paylink', version: VERSION },
            paths: { '/api/payment-links': { post: { summary: 'Create a payment link (direct shape)' } } },
            webhooks: { 'payment.status_changed': { post: { summary: 'Payment event delivered to ERP_NOTIFY_URL' } } },
            'x-error-catalogue': {
              VALIDATION_FAILED: {
                status: 400,
                title: 'Validation failed',
                doc: 'The request does not match the schema; see errors[].',
              },
            },
          }),
        },
      },
    },
    async () => app.swagger(),
  );

  const page = () => {
    const index = operationIndex(app.swagger());
    return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>paylink API reference</title>
<link rel="stylesheet" href="/docs/docs.css">
</head>
<body>
<header class="docs-top"><strong>paylink API reference</strong> <a href="/console">Operator console</a> <a href="/openapi.json">openapi.json</a> <a href="#error-catalogue">Error catalogue</a></header>
${index}
<div id="ops-index-slot"></div>
<div id="reference"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
${catalogue()}
</body>
</html>`.text;
  };

  const schema = (summary: string, description: string) => ({
    tags: [TAGS.logs],
    summary,
    description,
    querystring: NoQuery,
  });
  app.get(
    '/docs',
    {
      config: { auth: 'doc' },
      schema: {
        ...schema(
          'Human-readable reference',
          'This description rendered as a readable, searchable reference (Scalar, served from this service: nothing is loaded from elsewhere), followed by the error catalogue.',
        ),
        response: {
          200: Type.Unsafe<string>({
            description: 'HTML page',
            content: { 'text/html': { schema: { type: 'string' } } },
          }),
        },
      },
    },
    async (_req, reply) => {
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', docsCsp())
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'no-store')
        .send(page());
    },
  );
  app.get(
    '/docs/scalar.js',
    {
      config: { auth: 'doc' },
      schema: schema('Reference renderer script', 'The Scalar API reference bundle, served from its npm package.'),
    },
    async (_req, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('x-content-type-options', 'nosniff')
        .header('cache-control', 'private, max-age=3600')
        .send(await scalarBundle()),
  );
  app.get(
    '/docs/init.js',
    {
      config: { auth: 'doc' },
      schema: schema('Reference start-up script', 'Starts the renderer on the description embedded in the page.'),
    },
    async (_req, reply) =>
      reply.type('text/javascript; charset=utf-8').header('x-content-type-options', 'nosniff').send(DOCS_INIT_JS),
  );
  app.get(
    '/docs/docs.css',
    { config: { auth: 'doc' }, schema: schema('Reference stylesheet', 'The page frame and the error catalogue.') },
    async (_req, reply) =>
      reply.type('text/css; charset=utf-8').header('x-content-type-options', 'nosniff').send(DOCS_CSS),
  );
};

const DOCS_CSS = `
body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.docs-top{display:flex;flex-wrap:wrap;gap:6px 16px;align-items:center;padding:8px 16px;background:#12263f;color:#fff;font-size:14px}.docs-top a{color:#dce8f7}
.catalogue{max-width:960px;margin:24px auto 48px;padding:0 16px;font-size:15px;line-height:1.5}.catalogue dt{font-weight:600;margin-top:10px}.catalogue dd{margin:2px 0 0 0;color:#4a5568}
.catalogue dt:target{background:#fff4c2}
.ops-index{padding:6px 16px 8px;border-bottom:1px solid #d8dee8;font-size:14px;background:#f6f8fb}
.ops-groups{display:flex;flex-wrap:wrap;gap:4px 12px;margin:0 0 4px}.ops-index a{color:#12263f}
.ops-index summary{cursor:pointer;color:#12263f}.ops-index ul{margin:2px 0 6px;padding-left:16px}.ops-index li{margin:2px 0}
.ops-group{margin:8px 0 0;font-weight:600}.ops-index code{font-size:12px;display:inline-block;min-width:4.2em}
`;
