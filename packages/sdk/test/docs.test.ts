import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, REPO } from '../../server/test/helpers/process.js';
import { makeWorld, startServer, type TestBot, type TestServer } from './world.js';

// Issue 14: the docs cannot rot. Every fenced code block of README.md and docs/*.md carries a
// language tag; the runnable ones (js, mjs, ts) are extracted and executed against a real server
// started here, with a real bot's token in the environment; the others are skipped by their tag.
const RUNNABLE = new Set(['js', 'mjs', 'ts']);
const NOT_RUNNABLE = new Set([
  'sh',
  'bash',
  'text',
  'json',
  'mermaid',
  'http',
  'yaml',
  'diff',
  'markdown',
  'ini',
]);
// Inside the repository (its node_modules resolve bare imports) but not in node_modules, so tsx
// maps the workspace packages to their sources (tsconfig.json `paths`) as for any of our files.
const WORK = path.join(REPO, '.cache/parley-doc-blocks');

interface Block {
  file: string;
  line: number;
  lang: string;
  code: string;
}

export function codeBlocks(): Block[] {
  const files = [
    'README.md',
    ...readdirSync(path.join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const blocks: Block[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(REPO, file), 'utf8').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const open = /^(`{3,})(.*)$/.exec(lines[i]!);
      if (!open) continue;
      const end = lines.findIndex((l, j) => j > i && l.startsWith(open[1]!));
      blocks.push({
        file,
        line: i + 1,
        lang: open[2]!.trim(),
        code: lines.slice(i + 1, end).join('\n'),
      });
      i = end;
    }
  }
  return blocks;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a block for `ms` (a server or a client keeps running: it is stopped then). */
function run(b: Block, env: Record<string, string>, ms = 4000): Promise<Ran> {
  mkdirSync(WORK, { recursive: true });
  const file = path.join(
    WORK,
    `${b.file.replace(/\W/g, '_')}_${b.line}.${b.lang === 'ts' ? 'ts' : 'mjs'}`,
  );
  writeFileSync(file, b.code);
  // tsx for TypeScript, and for a block using our packages (their sources, not a build)
  const tsx = b.lang === 'ts' || b.code.includes("from '@parley/");
  const child = spawn(process.execPath, [...(tsx ? ['--import', 'tsx'] : []), file], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const timer = setTimeout(() => child.kill('SIGTERM'), ms);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe('code blocks of README.md and docs/*.md', () => {
  let server: TestServer;
  let bot: TestBot;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startServer();
    const w = await makeWorld(server.origin);
    bot = await w.addBot('docs');
    env = {
      BOT_TOKEN: bot.token,
      PARLEY_TOKEN: bot.token,
      PARLEY_URL: server.origin,
      PARLEY_GATEWAY_URL: `${server.origin.replace('http', 'ws')}/gateway`,
      PARLEY_WEBHOOK_SECRET: bot.webhookSecret,
      PORT: String(await freePort()),
    };
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(WORK, { recursive: true, force: true });
  }, 30_000);

  it('every block is tagged with a language this test knows', () => {
    const blocks = codeBlocks();
    expect(blocks.length).toBeGreaterThan(10);
    for (const b of blocks)
      expect(
        RUNNABLE.has(b.lang) || NOT_RUNNABLE.has(b.lang),
        `${b.file}:${b.line} \`\`\`${b.lang}`,
      ).toBe(true);
  });

  it('every runnable block runs against a real server without failing', async () => {
    const runnable = codeBlocks().filter((b) => RUNNABLE.has(b.lang));
    expect(runnable.length).toBeGreaterThanOrEqual(3);
    for (const b of runnable) {
      // A block that starts its own test server (@parley/sdk/testing) ends by itself.
      const r = await run(b, env, b.code.includes('@parley/sdk/testing') ? 90_000 : 4000);
      // It ended well, or was still running when stopped; nothing on stderr (no uncaught error).
      expect(
        r.code === 0 || r.code === null,
        `${b.file}:${b.line} exited ${r.code}\n${r.stderr}`,
      ).toBe(true);
      expect(r.stderr, `${b.file}:${b.line}`).toBe('');
      // One connection per bot (D29): let the next block's connection not replace this one's.
      await new Promise((res) => setTimeout(res, 1100));
    }
  }, 240_000);

  it("gateway.md's minimal client receives READY, and survives a refused connection", async () => {
    const block = codeBlocks().find((b) => b.file === 'docs/gateway.md' && b.lang === 'js')!;
    const live = await run(block, env);
    expect(live.stdout).toMatch(/^READY /m);
    const closed = await freePort(); // nobody listens there: every attempt is refused
    const refused = await run(
      block,
      { ...env, PARLEY_GATEWAY_URL: `ws://127.0.0.1:${closed}/gateway` },
      3500,
    );
    expect(refused.code).toBeNull(); // still running (retrying) when stopped
    expect(refused.stderr).toBe('');
    expect(refused.stdout.match(/ECONNREFUSED/g)?.length ?? 0).toBeGreaterThanOrEqual(2); // it tried again
  }, 60_000);
});
