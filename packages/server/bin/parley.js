#!/usr/bin/env node
// `parley` on the PATH (npm link / npx parley): runs the TypeScript CLI through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
