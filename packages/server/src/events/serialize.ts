import type { RecordedEvent } from '../domain/events/recorder.js';

/**
 * The one serializer of event data, shared by the gateway and webhooks (D30: the dispatch's `d`
 * is exactly the webhook envelope's `data`). The domain builds the data with views.ts; it is
 * turned into JSON text once, when recorded, and both wire forms splice that same text in, so
 * the two can never disagree and nothing is re-serialized per recipient.
 */
export const serializeData = (envelope: RecordedEvent['envelope']): string =>
  JSON.stringify(envelope.data);

/**
 * Where the text is kept: on the data object itself, under a symbol (JSON and the route's
 * serializer never see symbol keys). A WeakMap cost more than the serialization it saves.
 */
const ANSWER = Symbol('answer json');
type Answered = { [ANSWER]?: string };

/** The text of `data` for the request's answer (the recorder calls it for RecordedEvent.answer). */
export function keepAnswer(data: object, text: string): void {
  (data as Answered)[ANSWER] = text;
}

/**
 * The JSON text recorded for `data`, when a request answers with an event's data: the answer is
 * then sent as that text (http/answer.ts) and not serialized a second time by the route's
 * serializer (issue 29). Undefined when none was kept (no event, or a recorder that drops them).
 */
export const answerJson = (data: object): string | undefined => (data as Answered)[ANSWER];

/** D38: the webhook body `{type, data}`. */
export const webhookBody = (type: string, data: string): string =>
  `{"type":${JSON.stringify(type)},"data":${data}}`;

// D30's gateway dispatch `{op:0,t,s,d}` is built around the same text: gateway/frame-template.ts.
