import { Type, type Static } from 'typebox';

/**
 * Every error code the server sends (INTERFACE "Errors" + D6), with its HTTP status.
 * This is the single registry: the server maps codes to statuses from it and the docs list it.
 */
export const ERROR_STATUS = {
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  /** D58: the member is timed out: they can only read until it ends */
  TIMED_OUT: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** D54: the request did not fully arrive in time (answered below the router) */
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** the CDN's answer to a Range past the end of a file (D23) */
  RANGE_NOT_SATISFIABLE: 416,
  /** request headers over Node's limit, answered before routing */
  HEADERS_TOO_LARGE: 431,
  RATE_LIMIT_EXCEEDED: 429,
  QUOTA_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** D5: `details` of a 400 names each field and what is wrong with it. */
export const ErrorDetail = Type.Object({
  field: Type.String(),
  problem: Type.String(),
});
export type ErrorDetail = Static<typeof ErrorDetail>;

/** D5: one body form everywhere; extra members live inside `error`. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      retryAfter: Type.Optional(Type.Number({ description: 'seconds, may be fractional (429)' })),
      resetAt: Type.Optional(Type.String({ description: 'ISO 8601 (429 QUOTA_EXCEEDED)' })),
      details: Type.Optional(Type.Array(ErrorDetail)),
      requestId: Type.Optional(Type.String({ description: 'on 500: the id also in the log' })),
    }),
  },
  { title: 'ErrorBody', description: 'D5 error form' },
);
export type ErrorBody = Static<typeof ErrorBody>;
