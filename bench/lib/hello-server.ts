import { freePort } from './free-port.js';
import { baseEnv, spawnNode, type NodeProcess } from './node-process.js';

/** The minimal Fastify server (bench/servers/hello.ts) that HTTP figures are divided by. */
export async function startHello(): Promise<{ proc: NodeProcess; origin: string }> {
  const port = await freePort();
  const proc = await spawnNode({
    label: 'hello server',
    script: 'bench/servers/hello.ts',
    args: [String(port)],
    env: baseEnv(),
    readyText: 'hello server ready',
  });
  return { proc, origin: `http://127.0.0.1:${port}` };
}
