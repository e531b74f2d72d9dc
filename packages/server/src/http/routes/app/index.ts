import type { ApiPlugin } from '../../app.js';
import { authRoutes } from './auth.routes.js';
import { botOwnerRoutes } from './bots.routes.js';
import { meRoutes } from './me.routes.js';
import { notificationRoutes } from './notifications.routes.js';
import { sessionRoutes } from './sessions.routes.js';
import { guildRoutes } from './guilds.routes.js';
import { inviteRoutes } from './invites.routes.js';
import { typingRoutes } from './typing.routes.js';
import { exportRoutes } from './export.routes.js';
import { pushRoutes } from './push.routes.js';
import { oidcRoutes } from './oidc.routes.js';
import { guildAdminRoutes } from '../guild-admin.routes.js';

/**
 * D45: the route plugins of the people's API, registered under `/app/v1` (http/app.ts). Each area
 * adds its own file here; routes that need no session (register, login, invite preview) say so
 * with `config: { public: true }` and are limited per client address instead (D45).
 */
export const appRoutes: ApiPlugin[] = [
  authRoutes,
  sessionRoutes,
  meRoutes,
  notificationRoutes,
  botOwnerRoutes,
  guildRoutes,
  guildAdminRoutes,
  inviteRoutes,
  typingRoutes,
  exportRoutes,
  pushRoutes,
  oidcRoutes,
];
