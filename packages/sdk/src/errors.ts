import type { ErrorBody, ErrorCode, ErrorDetail } from '@parley/protocol';

/**
 * Every failure the SDK reports: an HTTP error answer (D5), a refused or closed gateway
 * connection (D28, D33), or a webhook that fails verification. `code` is the server's error code
 * (`NOT_FOUND`, `RATE_LIMIT_EXCEEDED`, …) or one of the SDK's own (`NETWORK_ERROR`,
 * `GATEWAY_CLOSED`, `BAD_SIGNATURE`, …).
 */
export class ParleyError extends Error {
  override readonly name = 'ParleyError';
  /** the server's error code (D5, D6), or the SDK's own for failures that are not answers */
  readonly code: ErrorCode | (string & {});
  /** HTTP status, or the gateway close code; 0 when there was no answer at all */
  readonly status: number;
  /** `X-Request-Id` of the answer (D7), or the 500 body's `requestId` */
  readonly requestId: string | undefined;
  /** 429: seconds to wait (D26), may be fractional */
  readonly retryAfter: number | undefined;
  /** 429 QUOTA_EXCEEDED: when the quota resets (D24) */
  readonly resetAt: string | undefined;
  /** 400: which fields are wrong (D5) */
  readonly details: ErrorDetail[] | undefined;

  constructor(
    code: string,
    message: string,
    status: number,
    extra: {
      requestId?: string | undefined;
      retryAfter?: number | undefined;
      resetAt?: string | undefined;
      details?: ErrorDetail[] | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.code = code;
    this.status = status;
    this.requestId = extra.requestId;
    this.retryAfter = extra.retryAfter;
    this.resetAt = extra.resetAt;
    this.details = extra.details;
  }
}

/** Default code for a status whose body carried none (e.g. a proxy's own HTML error page). */
const CODE_OF_STATUS: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMIT_EXCEEDED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/**
 * An error answer in either of the forms D5 names: the main one
 * `{"error":{"code","message",retryAfter?,resetAt?,details?}}` and the simpler
 * `{"error":"CODE","message":"…"}` some peers send for authentication failures.
 */
export function errorFromBody(status: number, body: unknown, headers?: Headers): ParleyError {
  const requestId = headers?.get('x-request-id') ?? undefined;
  const fallback = CODE_OF_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'HTTP_ERROR');
  const headerRetry = Number(headers?.get('retry-after'));
  const retryFromHeader =
    Number.isFinite(headerRetry) && headerRetry >= 0 ? headerRetry : undefined;
  if (body !== null && typeof body === 'object' && 'error' in body) {
    const e = (body as { error: unknown; message?: unknown }).error;
    if (typeof e === 'string') {
      const message = (body as { message?: unknown }).message;
      return new ParleyError(e, typeof message === 'string' ? message : e, status, {
        requestId,
        retryAfter: retryFromHeader,
      });
    }
    if (e !== null && typeof e === 'object') {
      const err = e as Partial<ErrorBody['error']>;
      return new ParleyError(
        typeof err.code === 'string' ? err.code : fallback,
        typeof err.message === 'string' ? err.message : `HTTP ${status}`,
        status,
        {
          requestId: err.requestId ?? requestId,
          retryAfter: typeof err.retryAfter === 'number' ? err.retryAfter : retryFromHeader,
          resetAt: err.resetAt,
          details: err.details,
        },
      );
    }
  }
  return new ParleyError(fallback, `HTTP ${status}`, status, {
    requestId,
    retryAfter: retryFromHeader,
  });
}
