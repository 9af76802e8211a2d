/** `node libs/db/dist/migrate.js`: create the database if needed and apply pending migrations. */
import 'reflect-metadata';
import { loadConfig } from '@flash-sale/config';
import { migrate } from './data-source';

migrate(loadConfig().database.url)
  .then((applied) => {
    console.log(applied.length ? `Applied migrations: ${applied.join(', ')}` : 'Schema is up to date.');
  })
  .catch((error: unknown) => {
    console.error('Migration failed:', error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
