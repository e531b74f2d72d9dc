/** D66: Web Push subscriptions (migration 0053). */
export interface PushSubscriptionsTable {
  id: number;
  user_id: number;
  /** the session it was made with (SHA-256 of its token): ending the session removes it */
  session_hash: string;
  endpoint: string;
  /** base64url, as the browser's PushSubscription gives them */
  p256dh: string;
  auth: string;
  created_at: number;
}

export interface PushTables {
  push_subscriptions: PushSubscriptionsTable;
}
