import type { RecordedEvent } from '../domain/events/recorder.js';

/**
 * The one serializer of event data, shared by the gateway and webhooks (D30: the dispatch's `d`
 * is exactly the webhook envelope's `data`). The domain builds the data with views.ts; it is
 * turned into JSON text once, when recorded, and both wire forms splice that same text in, so
 * the two can never disagree and nothing is re-serialized per recipient.
 */
export const serializeData = (envelope: RecordedEvent['envelope']): string =>
  JSON.stringify(envelope.data);

/** D38: the webhook body `{type, data}`. */
export const webhookBody = (type: string, data: string): string =>
  `{"type":${JSON.stringify(type)},"data":${data}}`;

// D30's gateway dispatch `{op:0,t,s,d}` is built around the same text: gateway/frame-template.ts.
