import { Type } from 'typebox';
import { exportPerson } from '../../../domain/export/export.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

const Zip = Type.Unsafe<unknown>({
  type: 'string',
  format: 'binary',
  description: 'application/zip (format parley-export/1: see domain/export/export.service.ts)',
});

/** Issue 28: a person takes their own data with them. */
export const exportRoutes: ApiPlugin = async (app, { deps }) => {
  app.get(
    '/users/@me/export',
    {
      schema: {
        tags: APP_TAGS,
        security: APP_SECURITY,
        summary:
          "A zip of the person's profile, memberships, own messages, DMs and uploads (issue 28)",
        response: responses({ 200: Zip }),
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const zip = await exportPerson(deps.domain, deps.blobs, p);
      const day = new Date(deps.domain.clock.now()).toISOString().slice(0, 10);
      return reply
        .header('content-type', 'application/zip')
        .header(
          'content-disposition',
          `attachment; filename="parley-export-${p.userId}-${day}.zip"`,
        )
        .send(zip);
    },
  );
};
