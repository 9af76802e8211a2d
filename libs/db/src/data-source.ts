import { DataSource, type DataSourceOptions } from 'typeorm';
import { OrderEntity } from './entities/order.entity';
import { SaleEntity } from './entities/sale.entity';
import { PaymentEntity } from './entities/payment.entity';
import { InitialSchema1763700000000 } from './migrations/1763700000000-initial-schema';
import { Payments1763800000000 } from './migrations/1763800000000-payments';
import { OrderSubmitToken1763900000000 } from './migrations/1763900000000-order-submit-token';
import { StockLeases1764000000000 } from './migrations/1764000000000-stock-leases';
import { Accounts1764110000000 } from './migrations/1764110000000-accounts';
import { DemoRuns1764110000001 } from './migrations/1764110000001-demo-runs';
import { ReconciliationWorkIndex1764200000000 } from './migrations/1764200000000-reconciliation-work-index';
import { SalePurpose1764300000000 } from './migrations/1764300000000-sale-purpose';
import { LockFenceAndStockSegments1764300000100 } from './migrations/1764300000100-lock-fence-and-stock-segments';
import { SaleBuyers1764300000200 } from './migrations/1764300000200-sale-buyers';
import { GuestNames1764300000300 } from './migrations/1764300000300-guest-names';
import { SaleBuckets1764400000000 } from './migrations/1764400000000-sale-buckets';
import { SaleWindowVersion1764500000000 } from './migrations/1764500000000-sale-window-version';
import { SaleWaitingRoom1764600000000 } from './migrations/1764600000000-sale-waiting-room';
import { RoomPlaces1764700000000 } from './migrations/1764700000000-room-places';
import { OversoldPeak1764800000000 } from './migrations/1764800000000-oversold-peak';
import { UserEntity } from './entities/user.entity';
import { DemoRunEntity } from './entities/demo-run.entity';

export const ENTITIES = [SaleEntity, OrderEntity, PaymentEntity, UserEntity, DemoRunEntity];
export const MIGRATIONS = [
  InitialSchema1763700000000,
  Payments1763800000000,
  OrderSubmitToken1763900000000,
  StockLeases1764000000000,
  Accounts1764110000000,
  DemoRuns1764110000001,
  ReconciliationWorkIndex1764200000000,
  SalePurpose1764300000000,
  LockFenceAndStockSegments1764300000100,
  SaleBuyers1764300000200,
  GuestNames1764300000300,
  SaleBuckets1764400000000,
  SaleWindowVersion1764500000000,
  SaleWaitingRoom1764600000000,
  RoomPlaces1764700000000,
  OversoldPeak1764800000000,
];

/**
 * TCP keepalive on every MySQL connection, probing after this much silence (then every second, ten
 * times: libuv's settings). A connection whose server vanished without a word — its machine cut off, its
 * address moved to a promoted replica — while a query waits for the answer sends nothing, so nothing
 * would ever tell it; the probes do, within about 15 s, and the pool replaces it. A live server that is
 * merely slow (a commit waiting for its semi-synchronous replica) answers the probes and is waited for.
 */
const KEEPALIVE_IDLE_MS = 5_000;

export interface DatabaseOptions {
  url: string;
  /** Connections in the pool; the worker's group commit needs few, the API's reads a few more. */
  poolSize?: number;
}

/** The options every process uses. Schema changes only ever come from MIGRATIONS, never `synchronize`. */
export function dataSourceOptions(options: DatabaseOptions): DataSourceOptions {
  return {
    type: 'mysql',
    url: options.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'typeorm_migrations',
    synchronize: false,
    timezone: 'Z',
    supportBigNumbers: true,
    bigNumberStrings: true,
    poolSize: options.poolSize ?? 10,
    extra: {
      connectionLimit: options.poolSize ?? 10,
      waitForConnections: true,
      enableKeepAlive: true,
      keepAliveInitialDelay: KEEPALIVE_IDLE_MS,
    },
  };
}

export function databaseName(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]+$/.test(name))
    throw new Error(`DATABASE_URL must name a database ([A-Za-z0-9_]+), got "${name}"`);
  return name;
}

/** Creates the database named in the URL if it is missing (the server connection needs no database). */
export async function ensureDatabase(url: string): Promise<void> {
  const serverUrl = new URL(url);
  const name = databaseName(url);
  serverUrl.pathname = '/';
  const server = new DataSource({ type: 'mysql', url: serverUrl.toString() });
  await server.initialize();
  try {
    await server.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await server.destroy();
  }
}

/** Creates the database if needed and applies pending migrations. Returns the names applied. */
export async function migrate(url: string): Promise<string[]> {
  await ensureDatabase(url);
  const dataSource = new DataSource(dataSourceOptions({ url, poolSize: 1 }));
  await dataSource.initialize();
  try {
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await dataSource.destroy();
  }
}
