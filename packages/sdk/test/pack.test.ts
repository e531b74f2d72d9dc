import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/index.js';
import { REPO } from '../../server/test/helpers/process.js';
import { eventually, makeWorld, startServer, type TestServer, type World } from './world.js';

// Issue #27: @parley/sdk as a bot author gets it. `npm pack` of the SDK and of @parley/protocol
// (its dependency, published beside it), the tarballs installed into a project in the system's
// temporary directory (outside the repository, so no workspace package can be found by
// accident), and there: a plain-Node ESM bot against a real server, and a TypeScript bot
// type-checked with the config `tsc --init` writes (DOM lib included, as the default is), and
// without the DOM lib. Bounded: each step has a deadline, the whole under 5 minutes.
const TSC = path.join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

/** Run a command to completion; rejects with its output when it fails or overruns. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  env: Record<string, string | undefined> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...cleanEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} → ${code ?? signal}:\n${out}`));
    });
  });
}

/** The environment without anything of the repository's own tooling leaking into the project. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(NODE_OPTIONS|PARLEY_|npm_|VITEST|TSX_)/i.test(k)) env[k] = v;
  return env;
}

const BOT_MJS = `// A bot author's plain-Node ESM bot: no TypeScript, no loader.
import { Bot, ParleyError } from '@parley/sdk';

const bot = new Bot({ token: process.env.PARLEY_TOKEN, url: process.env.PARLEY_URL });
bot.on('MESSAGE_CREATE', (m, bot) => bot.reply(m, 'pong: ' + m.content));
await bot.start();
console.log('online as ' + bot.me.name + ' ' + (typeof ParleyError));
`;

// Nothing of Node's own: the default tsconfig lists no `types`, so @types/node is not loaded.
const BOT_TS = `import { Bot, ParleyError, verifyWebhook, type Message, type BotEventEnvelope } from '@parley/sdk';

const bot = new Bot({ token: 'the-token', url: 'http://127.0.0.1:8080' });
bot.on('MESSAGE_CREATE', async (m: Message, b: Bot) => {
  const [sent] = await b.reply(m, \`you said: \${m.content}\`);
  const id: number | undefined = sent?.id;
  return id;
});
bot.on('GUILD_MEMBER_ADD', (d) => d.user.name.length);
try {
  await bot.start();
} catch (err) {
  if (err instanceof ParleyError) console.error(err.code, err.status);
}
const e: BotEventEnvelope = verifyWebhook('whsec_x', '{}', { 'webhook-id': 'a' });
// @ts-expect-error a channel id is a number
await bot.rest.messages.send('general', 'hi');
export { e };
`;

describe('@parley/sdk from its npm tarball, outside the repository (issue #27)', () => {
  let tmp: string;
  let project: string;
  let server: TestServer;
  let w: World;

  beforeAll(async () => {
    tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-pack-'));
    project = path.join(tmp, 'my-bot');
    mkdirSync(project);
    // The SDK's build builds @parley/protocol first; the server starts meanwhile.
    const starting = startServer();
    await run('npm', ['run', 'build', '-w', '@parley/sdk'], REPO, 200_000);
    await run(
      'npm',
      [
        'pack',
        '--ignore-scripts',
        '--pack-destination',
        tmp,
        '-w',
        '@parley/protocol',
        '-w',
        '@parley/sdk',
      ],
      REPO,
      60_000,
    );
    const tarballs = readdirSync(tmp).filter((f) => f.endsWith('.tgz'));
    expect(tarballs.sort()).toEqual(['parley-protocol-0.1.0.tgz', 'parley-sdk-0.1.0.tgz']);
    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'my-bot', version: '1.0.0', type: 'module', private: true }),
    );
    // Their dependencies (ws, typebox) and @types/node come from npm's cache when it has them.
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        ...tarballs.map((t) => path.join(tmp, t)),
        '@types/node@20',
      ],
      project,
      180_000,
    );
    server = await starting;
    w = await makeWorld(server.origin);
  }, 290_000);

  afterAll(async () => {
    await server?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, 30_000);

  it('the tarball holds dist, README, LICENSE and package.json — no sources, no tests', async () => {
    const list = await run('tar', ['-tzf', path.join(tmp, 'parley-sdk-0.1.0.tgz')], tmp, 10_000);
    const files = list.trim().split('\n').sort();
    expect(files).toContain('package/dist/index.js');
    expect(files).toContain('package/dist/index.d.ts');
    expect(files).toContain('package/dist/testing.js');
    expect(files).toContain('package/dist/testing.d.ts');
    expect(files).toContain('package/README.md');
    expect(files).toContain('package/LICENSE');
    expect(files.filter((f) => /\/(src|test|examples)\//.test(f))).toEqual([]);
  });

  it('a plain-Node ESM bot from the installed tarball answers on a real server', async () => {
    writeFileSync(path.join(project, 'bot.mjs'), BOT_MJS);
    const bot = await w.addBot('packed');
    const child = spawn(process.execPath, ['bot.mjs'], {
      cwd: project,
      env: { ...cleanEnv(), PARLEY_TOKEN: bot.token, PARLEY_URL: server.origin },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      await eventually(
        async () => (/online as packed function/.test(out) ? true : undefined),
        20_000,
      ).catch(() => {
        throw new Error(`the packed bot did not start:\n${out}`);
      });
      const human = new RestClient({ token: w.human.token, url: server.origin });
      const [asked] = await human.messages.send(w.channelId, 'ping');
      const answer = await eventually(async () => {
        const page = await human.messages.list(w.channelId, { after: asked!.id });
        return page.messages.find((m) => m.author.id === bot.userId);
      });
      expect(answer.content).toBe('pong: ping');
    } finally {
      child.kill();
    }
  }, 60_000);

  it('a TypeScript bot type-checks with the tsconfig `tsc --init` writes, with and without the DOM lib', async () => {
    writeFileSync(path.join(project, 'bot.ts'), BOT_TS);
    await run(process.execPath, [TSC, '--init'], project, 30_000);
    // The default config (its lib is the target's default, which includes the DOM).
    await run(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.json'], project, 120_000);
    // A Node-only project: no DOM lib, with @types/node (the rest as `tsc --init` wrote it).
    writeFileSync(
      path.join(project, 'tsconfig.nodom.json'),
      JSON.stringify({
        extends: './tsconfig.json',
        compilerOptions: { lib: ['esnext'], types: ['node'] },
        files: ['bot.ts'],
      }),
    );
    await run(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.nodom.json'], project, 120_000);
    // The check can fail: a wrong type in the bot is reported.
    writeFileSync(
      path.join(project, 'wrong.ts'),
      BOT_TS.replace('// @ts-expect-error a channel id is a number\n', ''),
    );
    await expect(
      run(process.execPath, [TSC, '--noEmit', '-p', 'tsconfig.json'], project, 120_000),
    ).rejects.toThrow(/TS2345/);
  }, 300_000);
});
