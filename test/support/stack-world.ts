import type { DataSource } from 'typeorm';
import type { ApiClient } from './api-client';
import { startStack, type RunningStack } from './running-stack';
import { createTestEnv, openDatabase, type TestEnv } from './test-env';

/** The real API (and worker) of one test file, ready once its `beforeAll` has run. */
export interface StackWorld {
  testEnv: TestEnv;
  stack: RunningStack;
  client: ApiClient;
  /** An admin's token. */
  admin: string;
  /** The test database, when asked for (`database: true`). */
  db: DataSource;
}

/**
 * Registers the `beforeAll`/`afterAll` pair most integration files open with: a private test
 * environment (`env` overrides its variables), the API and worker on it, an admin signed in; all
 * closed and dropped after the file. Its fields are read inside tests and hooks, once set.
 */
export function useStackWorld(
  options: { env?: Record<string, string>; worker?: boolean; database?: boolean } = {},
): StackWorld {
  const world = {} as StackWorld;
  beforeAll(async () => {
    world.testEnv = await createTestEnv(options.env);
    if (options.database) world.db = await openDatabase(world.testEnv.config);
    world.stack = await startStack(world.testEnv.config, { worker: options.worker });
    world.client = world.stack.client;
    world.admin = await world.client.adminToken(world.testEnv.env['ADMIN_PASSWORD']!);
  });
  afterAll(async () => {
    await world.stack?.close();
    await world.db?.destroy();
    await world.testEnv?.cleanup();
  });
  return world;
}
