/**
 * The account on the console's pages: which account a payment page is of (`?account=`, absent for
 * `default`, so a service of one account keeps its links as they always were), the switcher that
 * filters a list by account, and the account column, both shown only when there is more than one
 * account the operator may see.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../types.js';
import { ACCOUNT_ID_PATTERN, DEFAULT_ACCOUNT } from '../../model/account.js';
import { visibleAccountIds } from '../../domain/accounts/accounts.js';
import { operatorActor } from '../plugins/actor.js';
import { html, type Html } from './html.js';
import type { View } from './view.js';

/** `?account=` of a console page: an account id, or absent for `default`. */
export const AccountQuery = Type.Optional(
  Type.String({
    minLength: 1,
    maxLength: 32,
    pattern: ACCOUNT_ID_PATTERN,
    description: 'The account (absent: `default`, or every account for a list)',
  }),
);

/** `url` with `name=value` added to its query. */
export function withParam(url: string, name: string, value: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${name}=${encodeURIComponent(value)}`;
}

/** `path` for a payment of `account`: the account in the query unless it is `default`. */
export function inAccountUrl(path: string, account: string | undefined): string {
  return account === undefined || account === DEFAULT_ACCOUNT ? path : withParam(path, 'account', account);
}

/** The accounts the signed-in operator may see, when there is more than one (else none: no switcher, no column). */
export async function switchableAccounts(services: Deps<'store'>, req: FastifyRequest): Promise<string[]> {
  const ids = await visibleAccountIds(services, operatorActor(req));
  return ids.length > 1 ? ids : [];
}

/** The account filter of a list's form: "all accounts" and each account; nothing when there is one. */
export function accountSelect(v: View, accounts: readonly string[], current: string | undefined): Html {
  if (accounts.length === 0) return html``;
  return html`<label>${v.t('account')}<select name="account" data-account-switcher><option value="">${v.t('all_accounts')}</option>${accounts.map((a) => html`<option value="${a}"${a === current ? html` selected` : ''}>${a}</option>`)}</select></label>`;
}

/** The account's column head and cell, when the list shows accounts. */
export function accountHead(v: View, accounts: readonly string[]): Html {
  return accounts.length === 0 ? html`` : html`<th scope="col">${v.t('account')}</th>`;
}

export function accountCell(accounts: readonly string[], account: string): Html {
  return accounts.length === 0 ? html`` : html`<td class="mono" data-account="${account}">${account}</td>`;
}

/** What a payment's one-time form keys are bound to: its order id, within its account. */
export function paymentSubject(orderId: string, account: string): string {
  return account === DEFAULT_ACCOUNT ? orderId : `${account}/${orderId}`;
}
