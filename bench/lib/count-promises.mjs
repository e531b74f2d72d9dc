// Preloaded into a server by bench/send-quick.ts with BENCH_COUNT_PROMISES=1 (`node --import`):
// counts the promises the process creates (an async_hooks PROMISE init each), and on SIGUSR2
// writes the count so far to `<BENCH_PROMISE_DIR>/<pid>`. Issue 29: a send's promises (and the
// microtask turns and garbage that come with them) were the JavaScript spread thin that its CPU
// profiles could not name. The hook itself slows the server: compare counts, not the rates of
// such a run.
import { createHook } from 'node:async_hooks';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

let promises = 0;
createHook({
  init(_id, type) {
    if (type === 'PROMISE') promises++;
  },
}).enable();
const dir = process.env['BENCH_PROMISE_DIR'];
if (dir)
  process.on('SIGUSR2', () => writeFileSync(path.join(dir, String(process.pid)), String(promises)));
