import { Type, type TSchema } from 'typebox';
import { CursorParam, ErrorBody, IdParam, MEMBER_PAGE, MESSAGE_PAGE } from '@parley/protocol';
import type { ErrorBody as ErrorBodyType } from '@parley/protocol';

/** Route schema helpers: one TypeBox schema validates, types, serializes and documents. */

export const params = <K extends string>(...names: K[]) =>
  Type.Object(Object.fromEntries(names.map((n) => [n, IdParam])) as Record<K, typeof IdParam>);

/**
 * The D5 error body is registered once as a shared schema and referenced from every route, so
 * the OpenAPI document has one `ErrorBody` component instead of a copy per status and route.
 */
export const ErrorBodyShared = { ...ErrorBody, $id: 'ErrorBody' };
const ErrorRef = Type.Unsafe<ErrorBodyType>({ $ref: 'ErrorBody#' });

const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 415, 429, 500] as const;

/** Success schemas plus the D5 error form for every error status. */
export function responses<R extends Record<number, TSchema>>(ok: R) {
  const errors = Object.fromEntries(ERROR_STATUSES.map((s) => [s, ErrorRef])) as Record<
    (typeof ERROR_STATUSES)[number],
    typeof ErrorRef
  >;
  return { ...errors, ...ok };
}

export const NoContent = Type.Null({ description: 'No body' });

/** D16: limit 1–100 (default 50), not clamped; before/after are positions. */
export const MessagePageQuery = Type.Object({
  before: Type.Optional(CursorParam),
  after: Type.Optional(CursorParam),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MESSAGE_PAGE.max, default: MESSAGE_PAGE.default }),
  ),
});

/** D20: limit 1–1000 (default 100); after is a user id. */
export const MemberPageQuery = Type.Object({
  after: Type.Optional(CursorParam),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MEMBER_PAGE.max, default: MEMBER_PAGE.default }),
  ),
});

/**
 * D56/D58: the members page may carry each member's roles (and a running time-out) — asked for
 * with `withRoles=true`, so a client that does not ask sees exactly the entries it saw before.
 */
export const MemberListQuery = Type.Object({
  ...MemberPageQuery.properties,
  withRoles: Type.Optional(Type.Boolean({ default: false })),
});

export const num = (s: string | undefined): number | undefined =>
  s === undefined ? undefined : Number(s);
