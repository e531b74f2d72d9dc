import type { ApiPlugin } from '../../app.js';

/**
 * D45: the route plugins of the people's API, registered under `/app/v1` (http/app.ts). Each area
 * adds its own file here; routes that need no session (register, login, invite preview) say so
 * with `config: { public: true }` and are limited per client address instead (D45).
 */
export const appRoutes: ApiPlugin[] = [];
