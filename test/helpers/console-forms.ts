/** The console's forms as a browser fills them: the page's CSRF token and the cookie that goes with it. */
export function formState(res: { body: string; headers: Record<string, unknown> }): { token: string; cookie: string } {
  const token = /name="_csrf" value="([^"]+)"/.exec(res.body)?.[1] ?? '';
  const set = res.headers['set-cookie'];
  const cookie = (Array.isArray(set) ? set : [String(set)]).map((c: string) => c.split(';')[0]).join('; ');
  return { token, cookie };
}
