/** The console's forms as a browser fills them: the page's CSRF token and the cookie that goes with it. */
export function formState(res: { body: string; headers: Record<string, unknown> }): { token: string; cookie: string } {
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  const set = res.headers['set-cookie'];
  const cookie = (Array.isArray(set) ? set : [String(set)]).map((c: string) => c.split(';')[0]).join('; ');
  return { token, cookie };
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
  '&#96;': '`',
};

/**
 * The hidden fields of the page's form that posts to `action` (its CSRF token, its one-time key and
 * the values it carries), decoded as a browser sends them; empty when the page has no such form.
 */
export function hiddenFields(body: string, action: string): Record<string, string> {
  const start = body.indexOf(`<form method="post" action="${action}"`);
  if (start < 0) return {};
  const form = body.slice(start, body.indexOf('</form>', start));
  return Object.fromEntries(
    [...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [
      m[1],
      (m[2] ?? '').replace(/&(amp|lt|gt|quot|#39|#96);/g, (e) => ENTITIES[e] ?? e),
    ]),
  );
}
