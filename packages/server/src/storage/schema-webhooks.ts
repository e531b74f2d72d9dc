/** D38–D40: one durable row per (event, bot with a webhook), kept for the delivery log. */
export interface WebhookDeliveriesTable {
  id: number;
  /** X-Service-Delivery: the same on every retry, receivers dedupe on it */
  delivery_id: string;
  bot_id: number;
  event_type: string;
  /** the envelope serialized once: these exact bytes are signed and sent on every try */
  body: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number | null;
  /** a worker's lease on an in-flight try (ms); expired leases are retried (crash safety) */
  locked_until: number | null;
  /** PARLEY_NODE_ID of the node holding the lease: a restarted node frees its own at once */
  locked_by: number | null;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  created_at: number;
  updated_at: number;
}

export interface WebhooksTables {
  webhook_deliveries: WebhookDeliveriesTable;
}
