import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (the server is started from there, as `npm start` would). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');
export const SERVER_MAIN = path.join(REPO_ROOT, 'packages/server/src/cli/main.ts');
