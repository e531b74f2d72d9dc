/** D45: what every /app/v1 route declares for the OpenAPI document (tag `app`). */
export const APP_TAGS = ['app'];
/** A person's session: bearer token or the session cookie (D47). */
export const APP_SECURITY = [{ sessionToken: [] }, { sessionCookie: [] }];
/** Routes that take no session (register, login, invite preview). */
export const NO_SECURITY: Array<Record<string, string[]>> = [];
