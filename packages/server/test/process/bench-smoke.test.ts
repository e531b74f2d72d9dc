import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, tempDir } from '../helpers/process.js';

// Issue 6: CI does not run the benchmarks, but each one runs here at its --smoke size (a few
// seconds: a server of its own, tiny counts) and must produce every figure it reports, so the
// benchmarks cannot rot while the server changes under them. The figures themselves are not
// judged: a smoke run on a shared machine measures nothing. A benchmark whose feature the
// server does not have yet may report "skipped: … not available" instead.

const FIGURES: Record<string, { ids: string[]; mayBeUnavailable?: RegExp }> = {
  send: {
    ids: [
      'ratio_c10',
      'ratio_c50',
      'cpu_ratio_c10',
      'send_rps_c10',
      'send_p50_c10',
      'send_p99_c50',
      // issue 15: the floors (bench/servers/floor.ts) and Parley's ratio to them
      'floor_c10',
      'send_floor_c50',
      'floor_connected_c10',
      'send_floor_connected_c50',
      // issue 29: the connected case with the bots parsing every frame (the form before)
      'send_floor_connected_parse_c10',
      'floor_pg_c10',
      'floor_pg_batch_c50',
      'send_floor_pg_c10',
      // issue 29: PostgreSQL against the batched floor and against SQLite
      'send_floor_pg_batch_c10',
      'pg_sqlite_c50',
      'floor_pg_batch_sqlite_c10',
      // issue 24: a message with a mention and a reply, nobody and 50 bots connected
      'send_floor_rich_c10',
      'send_floor_connected_rich_c50',
      'rich_plain_c50',
    ],
  },
  fanout: {
    ids: ['a_p50', 'a_p99', 'a_ratio_p50', 'b_p99', 'b_ratio_p99', 'b_missing', 'b_out_of_order'],
    mayBeUnavailable: /^gateway not available/,
  },
  connections: {
    ids: ['kib_per_conn', 'last_hello_ready_ms', 'ratio_last_first', 'connect_rate', 'dropped'],
    mayBeUnavailable: /^gateway not available/,
  },
  history: { ids: ['ratio_p50', 'ratio_p99', 'big_p50', 'big_p99'] },
  webhooks: {
    ids: ['deliveries_per_s', 'ratio_p99_stalled', 'ratio_p50_stalled', 'healthy_p99', 'missing'],
    mayBeUnavailable: /^webhooks not available/,
  },
  // issue 26 (D67): SQLite only at the smoke size
  search: {
    ids: [
      'sqlite_common_word_p50',
      'sqlite_common_word_p99',
      'sqlite_rare_word_p99',
      'sqlite_phrase_p99',
    ],
  },
  idle: { ids: ['rss_start_mib', 'rss_idle_mib', 'ratio_idle_start', 'ratio_idle_load_end'] },
  'people-fanout': {
    ids: ['p50', 'p99', 'ratio_p99', 'kib_per_person', 'missing'],
    mayBeUnavailable: /^gateway not available/,
  },
  // issue 25: a slash command's round trip beside send→event
  interactions: {
    ids: [
      'interaction_p50',
      'interaction_p99',
      'send_event_p50',
      'send_event_p99',
      'ratio_p99',
      'ratio_p50',
      'missing',
    ],
  },
};

interface Stored {
  status: 'ok' | 'skipped' | 'error';
  reason?: string;
  figures: Array<{ id: string; label: string; value: number }>;
  size: { smoke: boolean };
}

/** `node --import tsx bench/run.ts <name> --smoke --out <file>`, as `npm run bench` would. */
function runBench(name: string, out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', name, '--smoke', '--out', out],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    // The runner has its own watchdog; this one only guards against a hung runner.
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('benchmarks at their --smoke size (issue 6)', () => {
  const tmp = tempDir('parley-bench-smoke-');
  afterAll(() => tmp.remove());

  for (const [name, expected] of Object.entries(FIGURES)) {
    it(`${name}: runs, stops by itself and reports its figures`, { timeout: 160_000 }, async () => {
      const out = path.join(tmp.path, `${name}.json`);
      const { code, output } = await runBench(name, out);
      const stored = (
        JSON.parse(readFileSync(out, 'utf8')) as { benchmarks: Record<string, Stored> }
      ).benchmarks[name];
      expect(stored, output).toBeDefined();
      if (!stored) return;
      expect(stored.size.smoke).toBe(true);
      if (stored.status === 'skipped' && expected.mayBeUnavailable) {
        expect(stored.reason, output).toMatch(expected.mayBeUnavailable);
        expect(code, output).toBe(0);
        return;
      }
      expect(stored.status, output).toBe('ok');
      expect(code, output).toBe(0);
      const byId = new Map(stored.figures.map((f) => [f.id, f.value]));
      for (const id of expected.ids) {
        expect(byId.has(id), `${name} figure ${id}\n${output}`).toBe(true);
        expect(Number.isFinite(byId.get(id)), `${name} figure ${id} = ${byId.get(id)}`).toBe(true);
      }
      // One summary line per figure is printed.
      for (const f of stored.figures) expect(output).toContain(`${name}: ${f.label} = `);
    });
  }
});
