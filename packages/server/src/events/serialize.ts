import type { RecordedEvent } from '../domain/events/recorder.js';

/**
 * The one serializer of event data, shared by the gateway and webhooks (D30: the dispatch's `d`
 * is exactly the webhook envelope's `data`). The domain builds the data with views.ts; it is
 * turned into JSON text once, when recorded, and both wire forms splice that same text in, so
 * the two can never disagree and nothing is re-serialized per recipient.
 */
export const serializeData = (envelope: RecordedEvent['envelope']): string =>
  JSON.stringify(envelope.data);

/** Event data a request answers with, and its JSON text (RecordedEvent.answer). */
const answers = new WeakMap<object, string>();

/** The text of `data` for the request's answer (the recorder calls it for RecordedEvent.answer). */
export function keepAnswer(data: object, text: string): void {
  answers.set(data, text);
}

/**
 * The JSON text recorded for `data`, when a request answers with an event's data: the answer is
 * then sent as that text (http/answer.ts) and not serialized a second time by the route's
 * serializer (issue 29). Undefined when none was kept (no event, or a recorder that drops them).
 */
export const answerJson = (data: object): string | undefined => answers.get(data);

/** D38: the webhook body `{type, data}`. */
export const webhookBody = (type: string, data: string): string =>
  `{"type":${JSON.stringify(type)},"data":${data}}`;

// D30's gateway dispatch `{op:0,t,s,d}` is built around the same text: gateway/frame-template.ts.
