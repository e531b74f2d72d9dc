/**
 * A Node process that loads nothing and waits, started as the server is (compiled, plain node,
 * the start script's V8 flags): the floor of the idle benchmark's memory figures.
 */
process.stdout.write('empty process ready\n');
const keepAlive = setInterval(() => {}, 1 << 30);
process.once('SIGTERM', () => {
  clearInterval(keepAlive);
  process.exit(0);
});
