// The workspace packages as their TypeScript sources, for Vite and Vitest (tsconfig.json's
// `paths` say the same to tsc, tsx and esbuild). Published packages resolve to dist/ instead.
import { fileURLToPath } from 'node:url';

const src = (p: string): string => fileURLToPath(new URL(`./packages/${p}`, import.meta.url));

export const workspaceAliases = [
  { find: /^@parley\/protocol$/, replacement: src('protocol/src/index.ts') },
  { find: /^@parley\/protocol\/gateway$/, replacement: src('protocol/src/gateway.ts') },
  { find: /^@parley\/sdk$/, replacement: src('sdk/src/index.ts') },
  { find: /^@parley\/sdk\/testing$/, replacement: src('sdk/src/testing.ts') },
];
