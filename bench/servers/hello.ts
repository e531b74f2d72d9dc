import Fastify from 'fastify';

/**
 * The baseline of the send benchmark: the smallest useful Fastify server, on the same machine
 * and Node as Parley, measured in the same run. Parley's figures are divided by its figures,
 * so a busy or slow machine cancels out (docs/architecture.md#habit-9).
 */
const port = Number(process.argv[2] ?? '0');
const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ host: '127.0.0.1', port });
process.stdout.write('hello server ready\n');
process.once('SIGTERM', () => {
  app
    .close()
    .then(() => process.exit(0))
    .catch(() => process.exit(1));
});
