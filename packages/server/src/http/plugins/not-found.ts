import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { AppError } from '../../errors/app-error.js';
import { sendError } from './error-handler.js';

/**
 * A GET/HEAD that no route matches may still be an answer of another plugin: the web app serves
 * its client-side routes this way (D55, routes/web.routes.ts). It returns undefined to decline.
 */
export interface NotFoundFallback {
  handler?: ((req: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined) | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    notFoundFallback: NotFoundFallback;
  }
}

const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * D2: unknown routes → 404 NOT_FOUND; a known path with the wrong method → 405
 * METHOD_NOT_ALLOWED with an `Allow` header. Fastify answers both with 404, so a shadow router
 * of every registered path tells them apart.
 */
export function installNotFound(app: FastifyInstance): void {
  const shadow = FindMyWay({ ignoreTrailingSlash: false });
  const fallback: NotFoundFallback = {};
  app.decorate('notFoundFallback', fallback);
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
    if ((req.method === 'GET' || req.method === 'HEAD') && fallback.handler) {
      const answered = fallback.handler(req, reply);
      if (answered) return answered;
    }
    return sendError(reply, new AppError('NOT_FOUND', `No route ${req.method} ${path}`), req.id);
  });
}
