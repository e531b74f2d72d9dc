import { AcceptedInvite, InvitePreview } from '@parley/protocol';
import { acceptInvite, previewInvite } from '../../../domain/invites/invites.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { responses } from '../../schemas.js';
import { CodeParams } from '../guild-admin.routes.js';

/**
 * D49 invites: previewed by anyone, accepted by people. Creating, listing and deleting them is
 * guild administration (D59: http/routes/guild-admin.routes.ts).
 */
export const inviteRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const tags = ['app'];

  app.get(
    '/invites/:code',
    {
      schema: {
        tags,
        summary: 'Preview an invite (no session needed); 404 unknown, used up or expired',
        params: CodeParams,
        response: responses({ 200: InvitePreview }),
        security: [],
      },
      config: { public: true },
    },
    async (req) => previewInvite(d, req.params.code),
  );

  app.post(
    '/invites/:code/accept',
    {
      schema: {
        tags,
        summary: 'Join the guild of an invite (banned: 403)',
        params: CodeParams,
        response: responses({ 200: AcceptedInvite }),
      },
    },
    async (req) => acceptInvite(d, principalOf(req), req.params.code),
  );
};
