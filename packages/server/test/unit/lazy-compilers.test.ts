import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { lazySerializerFactory } from '../../src/http/lazy-compilers.js';
import { installValidation } from '../../src/http/plugins/validation.js';

// http/lazy-compilers.ts and plugins/validation.ts: a route's response serializer and request
// validators are compiled on its first request, not at start (bench idle: 108.8 → 95 MiB after
// start), and behave exactly as the eager ones.
describe('schemas compiled on first use', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const make = (): FastifyInstance => {
    const a = Fastify({
      schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    });
    installValidation(a);
    a.addSchema({
      $id: 'Shared',
      type: 'object',
      properties: { n: { type: 'integer' } },
      required: ['n'],
    });
    return a;
  };

  it('a response is serialized by its schema (shared schemas included); a body validated by its own', async () => {
    app = make();
    app.post(
      '/echo',
      {
        schema: {
          body: {
            type: 'object',
            properties: { n: { type: 'integer' } },
            required: ['n'],
            additionalProperties: false,
          },
          response: {
            200: {
              type: 'object',
              properties: { shared: { $ref: 'Shared#' }, label: { type: 'string' } },
            },
          },
        },
      },
      async (req) => {
        const { n } = req.body as { n: number };
        // extra fields never leave: the serializer writes what the schema names
        return { shared: { n, secret: 'x' }, label: 7, secret: 'y' };
      },
    );
    await app.ready();
    for (let i = 0; i < 2; i++) {
      const ok = await app.inject({ method: 'POST', url: '/echo', payload: { n: 5 } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toBe('{"shared":{"n":5},"label":"7"}');
    }
    // D6: a wrong type is refused, with the compiled validator's errors (what D5 details show)
    const bad = await app.inject({ method: 'POST', url: '/echo', payload: { n: 'five' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ message: 'body/n must be integer' });
    const extra = await app.inject({ method: 'POST', url: '/echo', payload: { n: 1, m: 2 } });
    expect(extra.statusCode).toBe(400);
    expect(extra.json()).toMatchObject({ message: 'body must NOT have additional properties' });
  });

  it('nothing is compiled at start: a route no one calls costs nothing, and a broken schema shows only when called', async () => {
    app = make();
    app.get(
      '/never',
      {
        schema: {
          querystring: { type: 'object', properties: { a: { type: 'no-such-type' } } },
          response: { 200: { $ref: 'NoSuchSchema#' } },
        },
      },
      async () => ({}),
    );
    app.get('/fine', { schema: { response: { 200: { $ref: 'Shared#' } } } }, async () => ({
      n: 1,
    }));
    // eager compilation would have failed here, on both schemas
    await expect(app.ready()).resolves.toBeDefined();
    expect((await app.inject({ url: '/fine' })).body).toBe('{"n":1}');
    expect((await app.inject({ url: '/never' })).statusCode).toBe(500);
  });
});
