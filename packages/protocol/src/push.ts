import { Type, type Static } from 'typebox';
import { Id } from './ids.js';

/**
 * D66: Web Push. The body is the browser's `PushSubscription.toJSON()` (its `expirationTime`
 * is accepted and ignored): the push service's endpoint and the RFC 8291 keys, base64url.
 */
export const PushSubscriptionBody = Type.Object(
  {
    endpoint: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'the push service URL (https; D37 rules: a public address)',
    }),
    expirationTime: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    keys: Type.Object(
      {
        p256dh: Type.String({
          pattern: '^[A-Za-z0-9_-]{86,87}={0,1}$',
          description: "the browser's P-256 public key, uncompressed (65 bytes), base64url",
        }),
        auth: Type.String({
          pattern: '^[A-Za-z0-9_-]{22}(==)?$',
          description: 'the 16-byte auth secret, base64url',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { title: 'PushSubscriptionBody', additionalProperties: false },
);
export type PushSubscriptionBody = Static<typeof PushSubscriptionBody>;

export const PushSubscriptionCreated = Type.Object(
  { id: Id },
  { title: 'PushSubscriptionCreated', additionalProperties: false },
);
export type PushSubscriptionCreated = Static<typeof PushSubscriptionCreated>;

/** D66: the key the web app subscribes with (`applicationServerKey`). */
export const VapidPublicKey = Type.Object(
  {
    publicKey: Type.String({
      description: "the server's VAPID public key (base64url, uncompressed P-256)",
    }),
  },
  { title: 'VapidPublicKey', additionalProperties: false },
);
export type VapidPublicKey = Static<typeof VapidPublicKey>;

/**
 * D66: what a push carries to the service worker (encrypted, RFC 8291 aes128gcm): short, no
 * secrets — the channel's name and the author, the start of the text, where to open.
 */
export interface PushPayload {
  title: string;
  body: string;
  /** the app's path of the channel, e.g. `/channels/1/2` */
  url: string;
  /** one notification per channel: a newer one replaces it */
  tag: string;
}
