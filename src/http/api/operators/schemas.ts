/** The operators' requests and answers, beside their routes. */
import { Type } from 'typebox';
import { OPERATOR_ROLES, type OperatorRole } from '../../../model/operator.js';
import { USERNAME_PATTERN } from '../../../domain/operators/identity.js';
import { MIN_PASSWORD_LENGTH } from '../../../domain/operators/passwords.js';
import { Nullable } from '../../schemas/common.js';

export const RoleSchema = Type.Unsafe<OperatorRole>({
  type: 'string',
  enum: [...OPERATOR_ROLES],
  description:
    '`viewer` reads; `finance` also refunds, cancels, expires, imports reports and retries deliveries; `admin` also changes configuration, accounts, API keys and operators.',
});
export const Username = Type.String({ minLength: 1, maxLength: 64, pattern: USERNAME_PATTERN });
const AccountId = Type.String({ minLength: 1, maxLength: 64 });
const Accounts = Nullable(
  Type.Array(AccountId, {
    maxItems: 100,
    uniqueItems: true,
    description: 'The accounts the operator may see; null = all.',
  }),
);
const Password = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: 1024,
  description: `At least ${MIN_PASSWORD_LENGTH} characters; kept only as a slow hash.`,
});

export const UsernameParams = Type.Object({ username: Username }, { additionalProperties: false });

export const AddOperatorBody = Type.Object(
  {
    username: Username,
    role: RoleSchema,
    accounts: Type.Optional(Accounts),
    password: Type.Optional(Password),
  },
  { additionalProperties: false },
);

export const ChangeOperatorBody = Type.Object(
  {
    role: Type.Optional(RoleSchema),
    accounts: Type.Optional(Accounts),
    password: Type.Optional(Password),
    disabled: Type.Optional(Type.Boolean({ description: 'true ends every session of the operator at once.' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const OperatorSchema = Type.Object({
  username: Username,
  role: RoleSchema,
  accounts: Accounts,
  disabled: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_sign_in_at: Nullable(Type.String({ format: 'date-time' })),
  locked_until: Nullable(
    Type.String({ format: 'date-time', description: 'While in the future, the name is locked from some address.' }),
  ),
});

export const AddedOperatorSchema = Type.Object({
  ...OperatorSchema.properties,
  password: Type.Optional(Type.String({ description: 'The generated password, shown this once.' })),
});

export const MeSchema = Type.Object({ username: Type.String(), role: RoleSchema, accounts: Accounts });

export const OPERATOR_EXAMPLE = {
  username: 'ani',
  role: 'finance',
  accounts: null,
  disabled: false,
  created_at: '2026-11-22T10:00:00+07:00',
  last_sign_in_at: '2026-11-22T10:05:00+07:00',
  locked_until: null,
} as const;
