// Vite for the web app (D55). No framework plugin: esbuild compiles the JSX for Preact
// (`jsxImportSource`), which is all @preact/preset-vite would add for a production build.
import process from 'node:process';
import { defineConfig } from 'vite';
import { workspaceAliases } from '../../workspace-sources.ts';

const api = process.env.PARLEY_DEV_API ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  resolve: { alias: workspaceAliases },
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    assetsDir: 'assets',
    // No inline <script> and no data: modules: the CSP (D55) allows scripts from 'self' only.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
    sourcemap: false,
  },
  // `npm run dev -w @parley/web`: the app on Vite's dev server, the API of a running Parley.
  server: {
    proxy: {
      '/api': api,
      '/app': api,
      '/cdn': api,
      '/gateway': { target: api.replace(/^http/, 'ws'), ws: true },
    },
  },
});
