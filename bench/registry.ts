import { connectionsBench } from './connections.bench.js';
import { fanoutBench } from './fanout.bench.js';
import { historyBench } from './history.bench.js';
import { idleBench } from './idle.bench.js';
import { interactionsBench } from './interactions.bench.js';
import { peopleFanoutBench } from './people-fanout.bench.js';
import { searchBench } from './search.bench.js';
import { sendBench } from './send.bench.js';
import { webhooksBench } from './webhooks.bench.js';
import type { Benchmark } from './lib/types.js';

/** The benchmarks `npm run bench` runs, in this order. */
export const BENCHMARKS: readonly Benchmark[] = [
  sendBench,
  fanoutBench,
  connectionsBench,
  historyBench,
  webhooksBench,
  idleBench,
  peopleFanoutBench,
  searchBench,
  interactionsBench,
];
