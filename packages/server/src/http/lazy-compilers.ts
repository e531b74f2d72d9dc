import {
  SerializerSelector,
  type SerializerCompiler,
  type SerializerFactory,
} from '@fastify/fast-json-stringify-compiler';

/**
 * Response serializers compiled on a route's first answer instead of at start. Fastify compiles
 * every route's validators and serializers when the server starts: 177 routes, most of which a
 * given server seldom or never answers (an operator's export, an identity provider's callback),
 * and the generated code and its source text stayed in the heap for the life of the process
 * (bench idle: 108.8 MiB after start against the target of 100; with validators and serializers
 * compiled on first use, 95 MiB). What is compiled is what Fastify would have compiled, with the
 * same options and shared schemas; the validators' side is in plugins/validation.ts.
 */
export const lazySerializerFactory: SerializerFactory = (externalSchemas, options) => {
  const build = SerializerSelector()(externalSchemas, options);
  const lazy: SerializerCompiler = (route) => {
    let real: ((data: unknown) => string) | undefined;
    return (data: unknown) => (real ??= build(route))(data);
  };
  return lazy;
};
