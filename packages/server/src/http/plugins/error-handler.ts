import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody, ErrorCode, ErrorDetail } from '@parley/protocol';
import { ERROR_STATUS } from '@parley/protocol';
import { AppError, databaseUnavailable } from '../../errors/app-error.js';
import { isDatabaseUnreachable } from '../../storage/unreachable.js';

/**
 * The single place where errors become HTTP answers (D5–D7). Domain AppErrors carry their code;
 * Fastify's own errors (validation, JSON, body size, media type) are mapped to ours; anything
 * else is a 500 with the request id and no internal detail.
 */
export function sendError(reply: FastifyReply, err: AppError, requestId: string): FastifyReply {
  const body: ErrorBody = { error: { code: err.code, message: err.message, ...err.extra } };
  if (err.details) body.error.details = err.details;
  if (err.code === 'INTERNAL_ERROR') body.error.requestId = requestId;
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  return reply.code(ERROR_STATUS[err.code]).type('application/json; charset=utf-8').send(body);
}

type ValidationItem = {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: Record<string, unknown>;
};

function validationDetails(err: FastifyError): ErrorDetail[] {
  const items = (err.validation ?? []) as ValidationItem[];
  const part = err.validationContext ?? 'body';
  return items.map((v) => {
    let field = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    if (v.keyword === 'required' && typeof v.params?.['missingProperty'] === 'string')
      field = field ? `${field}.${v.params['missingProperty']}` : v.params['missingProperty'];
    let problem = v.message ?? 'is invalid';
    if (
      v.keyword === 'format' &&
      typeof v.params?.['format'] === 'string' &&
      v.params['format'].startsWith('parley-')
    )
      problem = 'must be a canonical decimal id from 1 to 2^53−1';
    if (v.keyword === 'maxLength' || v.keyword === 'minLength')
      problem = `${problem} (Unicode code points)`;
    return { field: field || part, problem };
  });
}

/** Turn anything thrown into an AppError. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // D72: a database that cannot be reached is a 503 with Retry-After, never a 500.
  if (isDatabaseUnreachable(err)) return databaseUnavailable(err);
  const fe = err as Partial<FastifyError>;
  if (fe.validation) {
    const details = validationDetails(fe as FastifyError);
    const first = details[0];
    const message = first ? `${first.field} ${first.problem}` : 'Invalid request';
    return new AppError('VALIDATION_ERROR', message, { details });
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Unsupported Content-Type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('VALIDATION_ERROR', 'Malformed request body');
    case 'FST_ERR_BAD_URL':
      return new AppError('VALIDATION_ERROR', 'Malformed URL');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // D4: an over-long id in the path is a bad id (400), not Fastify's 414.
      return new AppError('VALIDATION_ERROR', 'A path parameter is too long');
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code: ErrorCode =
      fe.statusCode === 413
        ? 'PAYLOAD_TOO_LARGE'
        : fe.statusCode === 415
          ? 'UNSUPPORTED_MEDIA_TYPE'
          : fe.statusCode === 404
            ? 'NOT_FOUND'
            : 'VALIDATION_ERROR';
    return new AppError(
      code,
      code === 'VALIDATION_ERROR' ? 'Bad request' : (fe.message ?? 'Bad request'),
    );
  }
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}

/**
 * Fastify's `frameworkErrors` option: errors raised while routing (bad percent-encoding, a path
 * parameter over maxParamLength) bypass setErrorHandler and would answer in Fastify's own body
 * form with its internal code. D5–D7: the same error form and X-Request-Id as everything else.
 */
export function frameworkErrors(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', req.id);
  void sendError(reply, toAppError(err), req.id);
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    // D54: a client that went away mid-request (aborted its body, or was cut by the request
    // timeout) is not a server error: one quiet line, no stack. The answer goes nowhere.
    if (clientGone(req, err)) {
      req.log.info({ code: (err as { code?: unknown }).code }, 'client aborted the request');
      return sendError(reply, new AppError('VALIDATION_ERROR', 'Request aborted'), req.id);
    }
    const appErr = toAppError(err);
    if (appErr.code === 'INTERNAL_ERROR') req.log.error({ err }, 'unhandled error');
    else if (appErr.code === 'SERVICE_UNAVAILABLE' && isDatabaseUnreachable(appErr.cause))
      // D72: the outage is logged once when it begins and once when it ends (health/health.ts).
      req.log.debug({ code: appErr.code }, appErr.message);
    else if (appErr.code === 'SERVICE_UNAVAILABLE')
      req.log.warn({ err: appErr.cause }, appErr.message);
    else req.log.debug({ code: appErr.code }, appErr.message);
    return sendError(reply, appErr, req.id);
  });
}

/** The request's connection is gone, or its body stream was aborted by the client. */
function clientGone(req: FastifyRequest, err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    req.raw.readableAborted ||
    req.raw.socket.destroyed ||
    (code === 'ECONNRESET' && (err as Error).message === 'aborted')
  );
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (malformed HTTP, headers over
 * the limit): still the D5 form with an X-Request-Id (D5, D7), then the connection is closed.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'Request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'The request did not fully arrive in time']
        : [400, 'VALIDATION_ERROR', 'Malformed HTTP request'];
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${randomUUID()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
