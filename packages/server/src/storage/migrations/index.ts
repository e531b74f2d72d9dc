import type { Migration, MigrationProvider } from 'kysely';
import { init } from './0001-init.js';
import { migration as events } from './0002-events.js';
import { migration as files } from './0003-files.js';
import { migration as webhooks } from './0004-webhooks.js';
import { migration as webhookClaim } from './0005-webhook-claim.js';
import { migration as people } from './0006-people.js';
import { migration as accounts } from './0007-accounts.js';
import { migration as deliveryRetention } from './0010-delivery-retention.js';
import { migration as eventLog } from './0011-event-log.js';
import { migration as cacheVersion } from './0012-cache-version.js';
import { migration as nameSkeleton } from './0013-name-skeleton.js';
import { migration as loginFailuresAddress } from './0014-login-failures-address.js';
import { migration as connectAttempts } from './0015-gateway-connect-attempts.js';
import { migration as eventAudience } from './0016-event-audience.js';
import { migration as rolesRankAudit } from './0020-roles-rank-audit.js';
import { migration as richMessages } from './0030-rich-messages.js';
import { migration as interactions } from './0040-interactions.js';
import { migration as notifications } from './0050-notifications.js';
import { migration as pushSubscriptions } from './0053-push-subscriptions.js';
import { migration as search } from './0055-search.js';
import { migration as oidc } from './0060-oidc.js';

/** Migrations in order; names sort lexically and never change once released. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001-init': init,
  '0002-events': events,
  '0003-files': files,
  '0004-webhooks': webhooks,
  '0005-webhook-claim': webhookClaim,
  '0006-people': people,
  '0007-accounts': accounts,
  '0010-delivery-retention': deliveryRetention,
  '0011-event-log': eventLog,
  '0012-cache-version': cacheVersion,
  '0013-name-skeleton': nameSkeleton,
  '0014-login-failures-address': loginFailuresAddress,
  '0015-gateway-connect-attempts': connectAttempts,
  '0016-event-audience': eventAudience,
  '0020-roles-rank-audit': rolesRankAudit,
  '0030-rich-messages': richMessages,
  '0040-interactions': interactions,
  '0050-notifications': notifications,
  '0053-push-subscriptions': pushSubscriptions,
  '0055-search': search,
  '0060-oidc': oidc,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
