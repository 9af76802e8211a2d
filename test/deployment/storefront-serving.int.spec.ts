import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { useStackWorld } from '../support/stack-world';

/**
 * The API serves the storefront's build on its own port (apps/api/src/web/storefront.ts) without
 * taking anything from the API: its paths keep their JSON answers and 404s. A stand-in build keeps this
 * test independent of Vite (the e2e tests use the real one).
 */
describe('storefront served by the API (real app)', () => {
  let build: string;

  beforeAll(() => {
    build = mkdtempSync(path.join(tmpdir(), 'storefront-'));
    mkdirSync(path.join(build, 'assets'));
    writeFileSync(path.join(build, 'index.html'), '<!doctype html><title>Flashbuy</title><div id="root"></div>');
    writeFileSync(path.join(build, 'assets', 'index-abc123.js'), 'console.log("shop")');
    writeFileSync(path.join(build, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  });
  // Registered after the build's beforeAll, so its stack starts on the files written there.
  const w = useStackWorld({ worker: false, env: async () => ({ STOREFRONT_DIR: build }) });

  afterAll(() => rmSync(build, { recursive: true, force: true }));

  it('answers the page at / and at every client-side route, revalidated on each load', async () => {
    for (const url of ['/', '/sales/42', '/orders/S42-01ABC', '/admin/sales/new']) {
      const page = await w.stack.client.raw('GET', url);
      expect({ url, status: page.status }).toEqual({ url, status: 200 });
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.text).toContain('<div id="root">');
      expect(page.headers['cache-control']).toBe('no-cache');
      expect(page.headers['x-request-id']).toBeDefined();
    }
  });

  it('caches content-hashed assets for a year, other files not', async () => {
    const asset = await w.stack.client.raw('GET', '/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await w.stack.client.raw('GET', '/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('leaves the API its own paths: JSON answers, JSON 404s, docs and health', async () => {
    const sales = await w.stack.client.call('GET', '/api/sales');
    expect(sales.status).toBe(200);
    expect(Array.isArray(sales.body)).toBe(true);

    const unknown = await w.stack.client.call<{ error: { code: string } }>('GET', '/api/no-such-route');
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');

    expect((await w.stack.client.raw('GET', '/health')).status).toBe(200);
    expect((await w.stack.client.raw('GET', '/docs')).text).toContain('swagger-ui');
    // The queue dashboard stays the server's, behind admin auth (not the storefront's /admin pages).
    const board = await w.stack.client.call<{ error: { code: string } }>('GET', '/admin/queues');
    expect(board.status).toBe(401);
  });

  it('answers a missing asset with 404, not with the page', async () => {
    // A page from an older build asking for a script the new build replaced: HTML would break it silently.
    expect((await w.stack.client.raw('GET', '/assets/gone-999.js')).status).toBe(404);
    expect((await w.stack.client.raw('GET', '/old-icon.png')).status).toBe(404);
  });
});
