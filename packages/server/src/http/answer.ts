import type { FastifyReply } from 'fastify';
import { answerJson } from '../events/serialize.js';

/**
 * Answers with `value`, a request's event data (RecordedEvent.answer): sent as the JSON text the
 * event recorded, when it kept one, instead of serializing the same object a second time with
 * the route's response schema (issue 29: the send's answer and its event were two
 * serializations of one message). Otherwise the route's serializer runs as usual: the handler
 * returns what this returns, once its value is known (`await` in the handler itself, so no
 * promise of its own: issue 29).
 */
export function answerWith<T extends object>(reply: FastifyReply, value: T): T | FastifyReply {
  const text = answerJson(value);
  if (text === undefined) return value;
  return reply.type('application/json; charset=utf-8').send(text);
}
