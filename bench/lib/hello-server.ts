import { freePort } from './free-port.js';
import { baseEnv, spawnNode, type NodeProcess } from './node-process.js';
import { compiledBaseline, serverStartCommand } from './server-build.js';

/**
 * The minimal Fastify server (bench/servers/hello.ts) that HTTP figures are divided by, started
 * the way the server is: compiled, plain node, the start script's V8 flags.
 */
export async function startHello(): Promise<{ proc: NodeProcess; origin: string }> {
  const port = await freePort();
  const proc = await spawnNode({
    label: 'hello server',
    script: compiledBaseline('bench/servers/hello.ts'),
    nodeArgs: serverStartCommand().nodeArgs,
    args: [String(port)],
    env: baseEnv(),
    readyText: 'hello server ready',
  });
  return { proc, origin: `http://127.0.0.1:${port}` };
}
