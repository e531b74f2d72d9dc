import type { SwaggerOptions } from '@fastify/swagger';

/** OpenAPI document generated from the same TypeBox schemas that validate and serialize. */
export function openApiOptions(origin: string): SwaggerOptions {
  return {
    // Shared schemas keep their own names as components (#/components/schemas/ErrorBody).
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) =>
        typeof json['$id'] === 'string' ? json['$id'] : `def-${i}`,
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Parley bot API',
        version: '1.0.0',
        description:
          'REST API for bots (INTERFACE.md + DECISIONS.md). Errors use the D5 form ' +
          '`{"error":{"code","message",…}}`. The operator API (`/admin/v1`) is tagged "operator".',
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
      ],
    },
  };
}
