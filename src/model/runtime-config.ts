/** The runtime configuration's document: the gateway mode, and every field an operator may change while the service runs. */
import { Type, type Static } from 'typebox';

export const GatewayModeSchema = Type.Union([
  Type.Literal('simulator'),
  Type.Literal('sandbox'),
  Type.Literal('production'),
]);
export type GatewayMode = Static<typeof GatewayModeSchema>;

const Url = Type.String({ minLength: 1, maxLength: 2048, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' });
const Secret = Type.String({ minLength: 1, maxLength: 512, pattern: '^\\S+$' });
const Int = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });

/** The `/api/charge` payment types that may go through BI-SNAP. */
export const SNAP_BI_METHODS = ['bank_transfer', 'gopay', 'shopeepay', 'qris'] as const;
export type SnapBiMethod = (typeof SNAP_BI_METHODS)[number];

const Pem = Type.String({ minLength: 1, maxLength: 16_384 });
const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' });

/**
 * The merchant's BI-SNAP credentials (`gateway.snap_bi`) and which charges use them. `client_secret`
 * and `private_key` are secrets (write-only, encrypted at rest); `public_key` is the gateway's,
 * which verifies its notifications. `base_url`: unset → the host of the gateway mode.
 */
export const SnapBiConfigSchema = Type.Object({
  client_id: Type.Optional(Id),
  client_secret: Type.Optional(Secret),
  partner_id: Type.Optional(Id),
  /** Five digits. */
  channel_id: Type.Optional(Type.String({ maxLength: 5, pattern: '^[0-9]{5}$' })),
  /** The merchant's RSA private key (PKCS#8 PEM), which signs the access-token request. */
  private_key: Type.Optional(Pem),
  /** The gateway's RSA public key (PEM), which verifies its notifications. */
  public_key: Type.Optional(Pem),
  base_url: Type.Optional(Url),
  /**
   * The VA `partnerServiceId`: the bank company code Midtrans assigned at onboarding, 8 characters,
   * digits left-padded with spaces (`"   70012"`). Every VA number starts with it.
   */
  partner_service_id: Type.Optional(Type.String({ minLength: 8, maxLength: 8, pattern: '^ *[0-9]+$' })),
  /** The `/api/charge` payment types sent through BI-SNAP; empty (the default): none. */
  methods: Type.Array(
    Type.Union([Type.Literal('bank_transfer'), Type.Literal('gopay'), Type.Literal('shopeepay'), Type.Literal('qris')]),
    { maxItems: 4, uniqueItems: true },
  ),
});
export type SnapBiConfig = Static<typeof SnapBiConfigSchema>;

/** `gateway.snap_bi.partner_service_id` until one is set: the sandbox's example bank company code. */
export const DEFAULT_PARTNER_SERVICE_ID = '   70012';

/**
 * The runtime configuration document (`/api/config`), the one source of its fields:
 * the stored overrides, the `POST` patch and the answer are derived from it. Environment values are
 * the defaults; overrides stored in the database win, so a change made on one instance reaches all.
 */
export const RuntimeConfigSchema = Type.Object({
  gateway: Type.Object({
    mode: GatewayModeSchema,
    /** The merchant id (MID, e.g. `G123456789`): when set, a notification naming another MID is refused. */
    merchant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 40, pattern: '^[A-Za-z0-9_-]+$' })),
    server_key: Type.Optional(Secret),
    client_key: Type.Optional(Secret),
    api_base_url: Url,
    app_base_url: Url,
    /**
     * Ask the gateway's status API before trusting a notification. On by default in every mode; it
     * can be turned off only in simulator mode, since the signature does not cover
     * `transaction_status` (a captured settlement edited into a refund still verifies).
     */
    confirm_notifications: Type.Boolean(),
    snap_bi: SnapBiConfigSchema,
  }),
  erp: Type.Object({
    notify_url: Type.Optional(Url),
    webhook_secret: Type.Optional(Secret),
    /** Per delivery attempt. */
    timeout_ms: Int(100, 120_000),
    /**
     * How long a failing event is retried before it is `dead`, in hours (default 72). Fractions down
     * to 0.01 (36 s), so that exhaustion and its alert can be rehearsed in staging.
     */
    retry_for_hours: Type.Number({ minimum: 0.01, maximum: 720 }),
    /**
     * At most this many delivery attempts per second to this endpoint, per instance (absent or 0 =
     * unlimited): a backlog after an outage drains at a rate the ERP can take.
     */
    max_rate_per_s: Type.Optional(Type.Number({ minimum: 0, maximum: 100_000 })),
  }),
  links: Type.Object({
    default_expiry_minutes: Int(5, 60 * 24 * 30),
    /** Empty = every method the gateway account has. */
    enabled_payments: Type.Array(Type.String({ minLength: 1, maxLength: 40, pattern: '^[a-z0-9_]+$' }), {
      maxItems: 40,
      uniqueItems: true,
    }),
  }),
  /**
   * Alerts to an operator's receiver (a chat webhook, an incident tool), Standard-Webhooks-signed
   * like ERP events when `secret` is set. `format: "slack"` sends `{text}` as Slack's incoming
   * webhooks take it. Thresholds in minutes; fractions (down to 0.01) so that an alert can be
   * rehearsed in staging. No `url`: alerts are still recorded and shown in the console.
   */
  alerts: Type.Object({
    url: Type.Optional(Url),
    secret: Type.Optional(Secret),
    format: Type.Union([Type.Literal('json'), Type.Literal('slack')]),
    /** A payment still pending this long past its expiry, after the status check, fires `payment_stuck_pending`. */
    stuck_pending_after_minutes: Type.Number({ minimum: 0.01, maximum: 60 * 24 * 30 }),
    /** No 2xx from the ERP endpoint for this long fires `erp_endpoint_failing`; gateway calls failing this long fire `gateway_unreachable`. */
    erp_failing_after_minutes: Type.Number({ minimum: 0.01, maximum: 60 * 24 * 30 }),
  }),
  reconcile: Type.Object({ interval_s: Int(5, 86_400), pending_after_minutes: Int(1, 60 * 24 * 7) }),
  /**
   * What is kept how long. Delivered ERP events (with their delivery attempts) and processed gateway
   * notifications older than `days` are deleted in small batches; transactions are never deleted,
   * undelivered events and unverified notifications stay until they are settled. Idempotency
   * records go when they expire (24 h).
   */
  retention: Type.Object({ days: Int(1, 3650) }),
});
export type RuntimeConfig = Static<typeof RuntimeConfigSchema>;
