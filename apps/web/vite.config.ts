import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/** Where `npm run dev` forwards everything that is not the storefront: the API started beside it. */
const apiTarget = process.env.API_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
const serverPaths = ['/api', '/docs', '/docs-json', '/health', '/metrics', '/admin/queues'];

export default defineConfig({
  plugins: [react()],
  resolve: {
    // The HTTP contract (error codes, statuses, limits, shapes) is shared with the API as source.
    alias: { '@flash-sale/contract': fileURLToPath(new URL('../../libs/contract/src/index.ts', import.meta.url)) },
  },
  server: {
    port: Number(process.env.WEB_PORT ?? 5173),
    proxy: Object.fromEntries(serverPaths.map((prefix) => [prefix, { target: apiTarget, changeOrigin: false }])),
  },
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['src/test/setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
    css: false,
    // The first test of a file loads the lazy admin routes; on a busy, shared CI machine that alone can
    // pass the default 5 s. A test that really hangs still fails.
    testTimeout: 15_000,
  },
});
