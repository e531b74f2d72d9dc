import { NotificationSettingBody, NotificationSettings } from '@parley/protocol';
import {
  listNotificationSettings,
  putNotificationSetting,
} from '../../../domain/notifications/settings.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

/** D66: a person's notification settings per guild and per channel. */
export const notificationRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const base = { tags: APP_TAGS, security: APP_SECURITY };

  app.get(
    '/users/@me/notification-settings',
    {
      schema: {
        ...base,
        summary: "The person's notification settings per guild and channel (D66)",
        response: responses({ 200: NotificationSettings }),
      },
    },
    async (req) => listNotificationSettings(d, principalOf(req)),
  );

  app.put(
    '/users/@me/notification-settings',
    {
      schema: {
        ...base,
        summary:
          "Set one guild's or one channel's level and mute; a channel's wins over its guild's (D66)",
        body: NotificationSettingBody,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await putNotificationSetting(d, principalOf(req), req.body);
      return reply.code(204).send(null);
    },
  );
};
