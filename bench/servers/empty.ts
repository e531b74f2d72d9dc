/**
 * A Node process that loads nothing but the TypeScript loader (tsx) and waits: the floor of the
 * idle benchmark's memory figures (every server here runs under `node --import tsx`).
 */
process.stdout.write('empty process ready\n');
const keepAlive = setInterval(() => {}, 1 << 30);
process.once('SIGTERM', () => {
  clearInterval(keepAlive);
  process.exit(0);
});
