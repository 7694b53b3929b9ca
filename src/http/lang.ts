/**
 * The language of a page for this request, and remembering an explicit choice: `?lang=id|en`
 * sets the `paylink_lang` cookie (a year, this site only) so the next page keeps it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LANG_COOKIE, isLang, pickLang, type Lang } from '../i18n/index.js';

const YEAR_S = 365 * 24 * 3600;

export function langOf(req: FastifyRequest, reply: FastifyReply): Lang {
  const query = (req.query as Record<string, unknown> | undefined)?.lang;
  const cookie = req.headers.cookie?.split(';').map((c) => c.trim().split('=')).find(([k]) => k === LANG_COOKIE)?.[1];
  const lang = pickLang({ query, cookie, acceptLanguage: req.headers['accept-language'] });
  if (isLang(query) && query !== cookie) {
    const secure = req.protocol === 'https' ? '; Secure' : '';
    void reply.header('set-cookie', `${LANG_COOKIE}=${query}; Path=/; Max-Age=${YEAR_S}; SameSite=Lax${secure}`);
  }
  // Caches (there are none for these no-store pages, but proxies) must not mix the languages.
  void reply.header('vary', 'Accept-Language, Cookie');
  return lang;
}
