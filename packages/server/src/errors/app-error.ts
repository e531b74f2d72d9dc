import { ERROR_STATUS, type ErrorCode, type ErrorDetail } from '@parley/protocol';

/**
 * Errors are data (docs/architecture.md#habit-1): domain code throws an AppError with a stable code;
 * exactly one place (http/plugins/error-handler.ts) turns it into an HTTP status and the D5 body.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  readonly extra: { retryAfter?: number; resetAt?: string };
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    opts: {
      details?: ErrorDetail[];
      retryAfter?: number;
      resetAt?: string;
      headers?: Record<string, string>;
      /** what went wrong underneath (logged, never sent) */
      cause?: unknown;
    } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = opts.details;
    this.extra = {};
    if (opts.retryAfter !== undefined) this.extra.retryAfter = opts.retryAfter;
    if (opts.resetAt !== undefined) this.extra.resetAt = opts.resetAt;
    this.headers = opts.headers ?? {};
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `Unknown ${what}`);
export const forbidden = (why: string): AppError => new AppError('FORBIDDEN', why);
export const invalid = (field: string, problem: string): AppError =>
  new AppError('VALIDATION_ERROR', `${field} ${problem}`, { details: [{ field, problem }] });
export const conflict = (why: string): AppError => new AppError('CONFLICT', why);

/**
 * D72: the database cannot be reached (storage/unreachable.ts decides): a temporary refusal with
 * Retry-After, never a 500. The outage is logged once elsewhere (health/health.ts).
 */
export const databaseUnavailable = (cause: unknown): AppError =>
  new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly', {
    retryAfter: 1,
    headers: { 'retry-after': '1' },
    cause,
  });
