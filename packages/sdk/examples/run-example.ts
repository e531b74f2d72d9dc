// For the examples' own tests: run an example bot as its own process (as `npx tsx <file>` would),
// with the test server's address and the bot's token, until it says it is online.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export async function runExample(
  file: string,
  env: Record<string, string>,
): Promise<{ stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start: ${out}`)), 30_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (/online|listening/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => reject(new Error(`${file} exited ${code}: ${out}`)));
  });
  return {
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
