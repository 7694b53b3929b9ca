/**
 * The language of a page for this request, and remembering an explicit choice: `?lang=id|en`
 * sets the `paylink_lang` cookie so the next page keeps it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { negotiateLang, type Lang } from '../../platform/i18n.js';

export function langOf(req: FastifyRequest, reply: FastifyReply): Lang {
  const query = (req.query as Record<string, unknown> | undefined)?.lang;
  const { lang, setCookie } = negotiateLang({
    query,
    cookieHeader: req.headers.cookie,
    acceptLanguage: req.headers['accept-language'],
    secure: req.protocol === 'https',
  });
  if (setCookie) void reply.header('set-cookie', setCookie);
  // One URL answers in either language: caches must not mix them.
  void reply.header('vary', 'Accept-Language, Cookie');
  return lang;
}
