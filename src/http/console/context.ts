import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorRole } from '../../model/operator.js';
import { OptionalStr } from '../schemas/common.js';
import type { AppError } from '../../platform/errors.js';
import type { Html } from './html.js';
import type { Alert, Section } from './layout.js';
import type { View } from './view.js';
import { consoleMessages, type ConsoleKey } from './i18n/console.js';
import { fieldMessageId, operatorMessage } from './i18n/errors.js';

/** Console pages are HTML for people; they are listed in the API description so every route is, without request schemas. */
export const consoleDoc = (summary: string, description: string) => ({
  tags: ['Operations'],
  summary,
  description,
  produces: ['text/html'],
});

/** `?lang=en|id` on every console page: its language, remembered in the `paylink_lang` cookie (anything else is ignored). */
export const LangQuery = OptionalStr(5);

export interface ConsoleContext {
  timeZone: string;
  /** The page's language (`?lang`, its cookie, `Accept-Language`) and its words; remembers an explicit choice. */
  view(req: FastifyRequest, reply: FastifyReply): View;
  /** `here`: the page the language links lead to (default: this GET's own URL, or the overview after a POST). */
  render(
    reply: FastifyReply,
    req: FastifyRequest,
    o: { title: string; section: Section; body: Html; alert?: Alert; status?: number; here?: string },
  ): FastifyReply;
  /** A CSRF token for the forms of this answer, bound to the signed-in operator and valid for `CSRF_VALIDITY_MS`. */
  csrfToken(req: FastifyRequest, reply: FastifyReply): string;
  /** The CSRF token of this answer's forms, and a one-time key per form that acts. */
  formTokens(req: FastifyRequest, reply: FastifyReply): FormTokens;
  /** Whether the signed-in operator holds `role`: a form the role may not use is not shown (and refused if sent anyway). */
  may(req: FastifyRequest, role: OperatorRole): boolean;
}

/** What a form that acts does, as its one-time key is bound to: the action, its subject and the values it carries (null: none). */
export type FormRequest = Readonly<Record<string, string | null>>;

/** The tokens of one answer's forms: its CSRF token, and a new one-time key for each form that acts, bound to the signed-in operator and to what that form does. */
export interface FormTokens {
  csrf: string;
  key(request: FormRequest): string;
  /** Whether the operator this answer is for holds `role` (forms beyond it are left out). */
  may(role: OperatorRole): boolean;
}

/** What a CSRF token and a form's one-time key are bound to: the signed-in operator (the auth hook has run before any form is read or made). */
export function operatorBinding(req: FastifyRequest): string {
  return `operator:${req.operatorUser ?? ''}`;
}

/** How long a console form stays usable: a working day, so a token that leaks does not stay good. */
export const CSRF_VALIDITY_MS = 12 * 60 * 60 * 1000;

const DONE = ['check', 'refund', 'cancel', 'expire', 'retry-deliveries', 'retry', 'replay', 'saved'] as const;

/** The message after an action went through (`?done=` of the page it redirects to), if `done` names one. */
export function doneAlert(v: View, done: string | undefined): Alert | undefined {
  const d = DONE.find((x) => x === done);
  return d ? { kind: 'ok', text: v.t(`done_${d}`) } : undefined;
}

/**
 * What went wrong, for the page's alert: a headline in the page's language (with the error code),
 * then the service's message in the page's language and the console's words (see
 * `i18n/errors.ts`), and the fields it names (an Indonesian page names them by their labels).
 */
export function errorAlert(v: View, e: AppError, requestId: string): Alert {
  const key = `err_${e.code}`;
  const headline =
    e.code === 'INTERNAL'
      ? v.t('internal_error', { id: requestId })
      : Object.hasOwn(consoleMessages.en, key)
        ? v.t(key as ConsoleKey)
        : v.t('err_other');
  const message = e.code === 'INTERNAL' ? undefined : operatorMessage(e.message, v.lang, (s) => v.word('st', s));
  const fields =
    e.extras.errors?.map((x) =>
      v.lang === 'id' ? `${fieldLabel(v, x.path)}: ${fieldMessageId(x.message)}` : `${x.path}: ${x.message}`,
    ) ?? [];
  const gateway = e.extras.gateway
    ? [
        v.lang === 'id'
          ? `Jawaban gateway ${e.extras.gateway.status_code}: “${e.extras.gateway.status_message}”`
          : `gateway ${e.extras.gateway.status_code}: ${e.extras.gateway.status_message}`,
      ]
    : [];
  return {
    kind: 'error',
    text: `${headline} (${e.code})`,
    items: [...(message === undefined ? [] : [message]), ...fields, ...gateway],
  };
}

/** A field named by a problem, by the label its form shows it with when there is one. */
function fieldLabel(v: View, path: string): string {
  const key = `cfg_${path.replace(/^\//, '').replace(/\//g, '.')}`;
  if (Object.hasOwn(consoleMessages.en, key)) return v.t(key as ConsoleKey);
  if (path === 'amount') return v.t('cf_amount');
  if (path === 'reason') return v.t('cf_reason');
  return path.replace(/^line (\d+), column (.*)$/, 'baris $1, kolom $2').replace(/^line (\d+)$/, 'baris $1');
}
