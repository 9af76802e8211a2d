/**
 * Where the bench (and its ceiling server) find the workspace and the built app. The bench measures
 * `dist`, and reuses the app's own code from it rather than re-implementing any of it.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Resolves packages (autocannon, ioredis, the app's libs) from the workspace root, as the apps do. */
export const require = createRequire(path.join(ROOT, 'package.json'));

/**
 * The built files the bench runs or imports: a missing one means `tsc -b` has not run since it was
 * added, and the bench builds first (ensureBuilt).
 */
export const APP_DIST = {
  api: 'apps/api/dist/main.js',
  apiCluster: 'apps/api/dist/cluster.js',
  worker: 'apps/worker/dist/main.js',
  migrate: 'libs/db/dist/migrate.js',
  submitTokenCodec: 'apps/api/dist/purchase/submit-token-codec.js',
  errorStatus: 'apps/api/dist/common/error-status.js',
};

/** A module of the built app, by its APP_DIST name. */
export const requireBuilt = (name) => require(path.join(ROOT, APP_DIST[name]));
