import { defineConfig } from 'tsup';

// dist/: ESM with .d.ts. The few runtime values taken from @parley/protocol (gateway opcodes and
// close codes, which import nothing) are bundled in; the .d.ts refers to @parley/protocol for the
// wire types: it is published beside the SDK as its dependency (issue #27). `ws` stays a
// dependency, loaded only when needed.
export default defineConfig({
  entry: ['src/index.ts', 'src/testing.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: false, // tsc -p tsconfig.build.json writes the declarations
  noExternal: ['@parley/protocol'],
  external: ['ws'],
  clean: true,
  sourcemap: true,
});
