import type { FastifyInstance } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError } from '../../errors/app-error.js';
import { sendError } from './error-handler.js';

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * D2: unknown routes → 404 NOT_FOUND; a known path with the wrong method → 405
 * METHOD_NOT_ALLOWED with an `Allow` header. Fastify answers both with 404, so a shadow router
 * of every registered path tells them apart.
 */
export function installNotFound(app: FastifyInstance): void {
  const shadow = FindMyWay({ ignoreTrailingSlash: false });
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) {
      if (METHODS.includes(m as HTTPMethod) && !shadow.hasRoute(m as HTTPMethod, route.url)) {
        shadow.on(m as HTTPMethod, route.url, () => {});
      }
    }
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = METHODS.filter((m) => shadow.find(m, path) !== null);
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '));
      return sendError(
        reply,
        new AppError(
          'METHOD_NOT_ALLOWED',
          `${req.method} is not allowed here; use ${allowed.join(', ')}`,
        ),
        req.id,
      );
    }
    return sendError(reply, new AppError('NOT_FOUND', `No route ${req.method} ${path}`), req.id);
  });
}
