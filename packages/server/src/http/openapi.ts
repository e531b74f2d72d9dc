import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import type { SwaggerOptions } from '@fastify/swagger';
import { installErrorHandler } from './plugins/error-handler.js';
import { installNotFound } from './plugins/not-found.js';
import { refineOpenApi, type RouteInfo } from './openapi-refine.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document of this app's routes (what `/openapi.json` serves). */
    openApiDocument(): Promise<object>;
  }
}

/**
 * D70: the Content-Security-Policy of /docs (Swagger UI). Its page loads its scripts and styles
 * from /docs/static and runs no inline script; it sets element styles from script (allowed by
 * 'unsafe-inline' for styles only), shows data: images, and fetches /openapi.json and, when a
 * reader tries a request, the API on this origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** OpenAPI document generated from the same TypeBox schemas that validate and serialize. */
export function openApiOptions(origin: string, routes: readonly RouteInfo[] = []): SwaggerOptions {
  return {
    // ids as integers, named components, operationIds, per-route errors, headers, webhooks
    transformObject: (d) => refineOpenApi('openapiObject' in d ? d.openapiObject : {}, routes),
    // Shared schemas keep their own names as components (#/components/schemas/ErrorBody).
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`,
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley API',
        version: '1.0.0',
        description:
          'REST API for bots (`/api/v1`), with the operator API (`/admin/v1`, tag "operator") and ' +
          'the webhook events a bot receives. The contract, with every D-number cited here, is ' +
          'docs/protocol.md. Errors use the D5 form `{"error":{"code","message",…}}`.',
      },
      servers: [{ url: origin }],
      components: {
        securitySchemes: {
          botToken: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: 'Bot token (D8), or a user session token (D41)',
          },
          adminToken: { type: 'http', scheme: 'bearer', description: 'PARLEY_ADMIN_TOKEN (D41)' },
          sessionToken: {
            type: 'http',
            scheme: 'bearer',
            description: "A person's session token from register or login (D45–D47)",
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: 'parley_session',
            description:
              'The session cookie set by register and login; writes need Origin = the public origin (D47)',
          },
        },
      },
      security: [{ botToken: [] }],
      tags: [
        { name: 'bot' },
        { name: 'messages' },
        { name: 'channels' },
        { name: 'members' },
        { name: 'dm' },
        { name: 'operator', description: 'Operator API (D41)' },
        { name: 'app', description: "The people's API /app/v1 (D45–D51)" },
      ],
    },
  };
}

/**
 * `/openapi.json` and `/docs` (Swagger UI), with @fastify/swagger, @fastify/swagger-ui and
 * what they pull in (yaml, @fastify/static, json-schema-resolver: ~100 modules) loaded on the
 * first request to one of them instead of at start (issue #6: a server nobody reads the docs of
 * should not keep them in memory).
 *
 * @fastify/swagger documents the routes it sees being added, so it would have to be registered
 * before every route. Instead this records each route's definition as it is added (cheap: the
 * objects exist anyway) and, when the docs are first wanted, builds a second Fastify instance
 * that never listens: swagger and swagger-ui registered, then the recorded routes replayed with
 * no-op handlers. That instance answers the `/docs` requests (the main app hands them over) and
 * produces the document. It is the same route list, in the same order, with the same shared
 * schemas, so the document is the one swagger would have produced in the app itself
 * (test/unit/docs.test.ts compares it with the committed docs/openapi.json).
 *
 * Call before any route is added: routes added earlier are not documented.
 */
export function installDocs(app: FastifyInstance, origin: string): void {
  // Serving the docs: these routes are added before the recorder, so they are not replayed
  // into the docs instance (which has its own /docs routes from swagger-ui).
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = (): Promise<FastifyInstance> => {
    docs ??= buildDocsApp(origin, routes, schemas).catch((err: unknown) => {
      docs = undefined; // try again on the next request
      throw err;
    });
    return docs;
  };
  app.decorate('openApiDocument', async () => (await docsApp()).swagger());
  app.get('/openapi.json', { schema: { hide: true } }, () => app.openApiDocument());
  for (const url of ['/docs', '/docs/*'])
    app.route({
      method: ['GET', 'HEAD'],
      url,
      schema: { hide: true },
      handler: async (req, reply) => {
        const target = await docsApp();
        // The docs instance writes the response itself; the header set by our onRequest hook
        // lives on `reply` and would be lost, so it goes on the raw response.
        reply.raw.setHeader('x-request-id', req.id);
        // D70: /docs shares the web app's origin (and its session cookie): its pages run only
        // this origin's scripts, never inline ones, and cannot be framed.
        reply.raw.setHeader('content-security-policy', DOCS_CSP);
        reply.hijack();
        target.routing(req.raw, reply.raw);
      },
    });

  // Recording, as @fastify/swagger's own hooks do (lib/util/add-hook.js): every route except
  // the implicit HEAD twins (swagger leaves those out too), and at ready the shared schemas of
  // the app and of every encapsulated instance.
  const routes: RouteOptions[] = [];
  const schemas = new Map<string, unknown>();
  let instances: FastifyInstance[] = [];
  app.addHook('onRoute', (route) => {
    if (route.method !== 'HEAD') routes.push(route);
  });
  app.addHook('onRegister', (instance) => {
    instances.push(instance);
  });
  app.addHook('onReady', async () => {
    for (const i of [...instances, app])
      for (const [id, schema] of Object.entries(i.getSchemas())) schemas.set(id, schema);
    instances = [];
  });
}

async function buildDocsApp(
  origin: string,
  routes: readonly RouteOptions[],
  schemas: ReadonlyMap<string, unknown>,
): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([
    import('@fastify/swagger'),
    import('@fastify/swagger-ui'),
  ]);
  const docs = Fastify({ logger: false });
  // It only describes the API routes and never runs them: no validators or serializers to build.
  docs.setValidatorCompiler(() => () => true);
  docs.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Unknown paths under /docs answer in the D5 form, as everywhere else.
  installErrorHandler(docs);
  installNotFound(docs);
  for (const schema of schemas.values()) docs.addSchema(schema);
  await docs.register(swagger, openApiOptions(origin, routes as unknown as readonly RouteInfo[]));
  await docs.register(swaggerUi, { routePrefix: '/docs' });
  for (const r of routes)
    docs.route({
      method: r.method,
      url: r.url,
      ...(r.schema ? { schema: r.schema } : {}),
      ...(r.config ? { config: r.config } : {}),
      exposeHeadRoute: false,
      handler: notServed,
    });
  await docs.ready();
  return docs;
}

async function notServed(): Promise<never> {
  throw new Error('the docs instance does not serve API routes');
}
