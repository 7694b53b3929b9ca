/**
 * `GET /`: where to go from here, for whoever opens the bare address. A browser (Accept names
 * text/html) gets a small page linking the console and the reference; any other client gets the
 * same links as JSON. Public: it names only paths every installation has.
 */
import { Type } from 'typebox';
import { TAGS, type RoutePlugin } from '../../types.js';
import { NoQuery } from '../../schemas/common.js';

export const HOME_LINKS = { console: '/console', docs: '/docs', openapi: '/openapi.json', health: '/health' } as const;

const HomeSchema = Type.Object({
  service: Type.Literal('paylink'),
  links: Type.Object({ console: Type.String(), docs: Type.String(), openapi: Type.String(), health: Type.String() }),
});

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>paylink</title></head>
<body>
<h1>paylink</h1>
<p>Payment links, charges and status between the ERP and the Midtrans gateway.</p>
<ul>
<li><a href="${HOME_LINKS.console}">Operator console</a> (operator credentials)</li>
<li><a href="${HOME_LINKS.docs}">API reference</a> (operator credentials or an API key)</li>
<li><a href="${HOME_LINKS.health}">Health</a></li>
</ul>
</body>
</html>
`;

/** True when the client lists text/html among what it accepts, with a weight above 0. */
function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((part) => {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return type.trim() === 'text/html' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

export const homeRoutes: RoutePlugin = async (app) => {
  app.get(
    '/',
    {
      config: { auth: 'none' },
      schema: {
        tags: [TAGS.health],
        summary: 'Where to go from here',
        description:
          'A browser (`Accept: text/html`) gets a small page linking the operator console and the API reference; any other client gets the same links as JSON.',
        querystring: NoQuery,
        response: {
          200: Type.Unsafe<unknown>({
            description: 'The links: an HTML page for a browser, JSON otherwise',
            content: {
              'application/json': { schema: HomeSchema, example: { service: 'paylink', links: HOME_LINKS } },
              'text/html': { schema: { type: 'string' } },
            },
          }),
        },
      },
    },
    async (req, reply) => {
      void reply.header('vary', 'Accept').header('x-content-type-options', 'nosniff');
      if (wantsHtml(req.headers.accept)) {
        return reply
          .type('text/html; charset=utf-8')
          .header(
            'content-security-policy',
            "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
          )
          .send(PAGE);
      }
      return reply
        .type('application/json; charset=utf-8')
        .send(JSON.stringify({ service: 'paylink', links: HOME_LINKS }));
    },
  );
};
