/** Accounts and their API keys as operators see them: never a key after its creation, never a secret. */
import { Type, type Static } from 'typebox';
import type { AccountSummary } from '../../../domain/accounts/accounts.js';
import type { ApiKeyRecord } from '../../../model/account.js';
import { GatewayModeSchema } from '../../../model/runtime-config.js';
import { apiTime, apiTimeOrNull } from '../../../platform/time.js';
import { Nullable } from '../../schemas/common.js';

export const AccountViewSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  merchant_id: Nullable(Type.String()),
  mode: GatewayModeSchema,
  created_at: Type.String(),
  disabled: Type.Boolean(),
});

export const AccountListSchema = Type.Object({ data: Type.Array(AccountViewSchema) });

export const ACCOUNT_EXAMPLE: Static<typeof AccountViewSchema> = {
  id: 'toko-b',
  name: 'Toko B',
  merchant_id: 'G123456789',
  mode: 'sandbox',
  created_at: '2026-11-22T09:00:00+07:00',
  disabled: false,
};

export function accountView(a: AccountSummary): Static<typeof AccountViewSchema> {
  return {
    id: a.id,
    name: a.name,
    merchant_id: a.merchantId,
    mode: a.mode,
    created_at: apiTime(a.createdAt),
    disabled: a.disabledAt !== null,
  };
}

export const ApiKeyViewSchema = Type.Object({
  key_id: Type.String(),
  label: Nullable(Type.String()),
  created_at: Type.String(),
  last_used_at: Nullable(Type.String()),
});

export const NewApiKeyViewSchema = Type.Object({
  key_id: Type.String(),
  key: Type.String({ description: 'The key itself: shown this once, kept only as a hash.' }),
  label: Nullable(Type.String()),
  created_at: Type.String(),
});

export const ApiKeyListSchema = Type.Object({ data: Type.Array(ApiKeyViewSchema) });

export const API_KEY_EXAMPLE: Static<typeof ApiKeyViewSchema> = {
  key_id: 'key_3q2-7wEvAAlt',
  label: 'ERP production',
  created_at: '2026-11-22T09:00:00+07:00',
  last_used_at: '2026-11-22T10:15:00+07:00',
};

export function apiKeyView(k: ApiKeyRecord): Static<typeof ApiKeyViewSchema> {
  return {
    key_id: k.keyId,
    label: k.label,
    created_at: apiTime(k.createdAt),
    last_used_at: apiTimeOrNull(k.lastUsedAt),
  };
}
