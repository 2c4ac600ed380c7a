/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

// Tauri expects a fixed dev port (devUrl http://localhost:5173) and a static build in ui/dist.
const host = process.env.TAURI_DEV_HOST;

export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  envPrefix: ['VITE_', 'TAURI_ENV_'],
  server: {
    port: 5173,
    strictPort: true,
    host: host || false,
    hmr: host ? { protocol: 'ws', host, port: 5174 } : undefined,
    watch: { ignored: ['**/src-tauri/**', '**/target/**'] },
  },
  preview: { port: 4173, strictPort: false },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Hash-named assets only: nothing inline, so the strict CSP (script-src 'self') holds.
    assetsInlineLimit: 0,
    sourcemap: !!process.env.TAURI_ENV_DEBUG,
    minify: !process.env.TAURI_ENV_DEBUG,
  },
  resolve: process.env.VITEST ? { conditions: ['browser'] } : undefined,
  test: {
    include: ['tests/unit/**/*.test.ts'],
    // Node by default: a jsdom per file cost ~45 s of a run; a file that needs the DOM says so
    // in its first line (`// @vitest-environment jsdom`).
    environment: 'node',
  },
});
