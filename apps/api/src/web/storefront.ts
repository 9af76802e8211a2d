import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance } from 'fastify';

/** Paths that belong to the server, never to the storefront's client-side router. */
const SERVER_PATHS = /^\/(api|docs|health|metrics|admin\/queues)(\/|$|\?|-json)/;
/**
 * A request for a file (a dot in the last segment, or anything under /assets) that the build does not
 * hold: a page from an older build asking for a script the new build replaced. It must get a 404 — the
 * page, served as a script, would break the app with no error the browser shows.
 */
const FILE_PATH = /^\/(assets\/|([^?]*\/)?[^/?]*\.[^/?]*(\?|$))/;

/**
 * Serves the built storefront (apps/web, a single-page app) from the API's own port, so one URL is
 * the whole product and the browser never needs CORS. Files under /assets carry a content hash in
 * their names and are cached for a year; index.html is revalidated on every load, so a new build is
 * picked up at once. Any other GET that is not a server path answers index.html and lets the
 * client-side router draw the page (or its own "not found").
 *
 * Returns false, and serves nothing, when the directory holds no build (a developer who runs the API
 * alone, or uses `npm run dev`, where Vite serves the storefront).
 */
export async function installStorefront(app: NestFastifyApplication, storefrontDir: string): Promise<boolean> {
  const root = path.resolve(storefrontDir);
  if (!existsSync(path.join(root, 'index.html'))) return false;

  await app.register(async (scope: FastifyInstance) => {
    await scope.register(fastifyStatic, {
      root,
      wildcard: false, // one route per built file, so unknown paths fall through to the SPA route below
      setHeaders: (response, filePath) => {
        const hashed = filePath.startsWith(path.join(root, 'assets') + path.sep);
        void response.header('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
    scope.get('/*', async (request, reply) => {
      if (SERVER_PATHS.test(request.url) || FILE_PATH.test(request.url)) return reply.callNotFound();
      return reply.header('cache-control', 'no-cache').sendFile('index.html');
    });
  });
  return true;
}
