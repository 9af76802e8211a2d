import type { Connection, RowDataPacket } from 'mysql2/promise';
import type { Violation } from './checker';

/** Whose rows the explorer made: every sale it created and every buyer it signed in, over the exploration. */
export interface ExplorerMade {
  saleIds: ReadonlySet<string>;
  userIds: ReadonlySet<string>;
  /**
   * The exploration's guest sign-ins whose answer never came (a timeout, a cut link): each may have made a
   * guest the explorer never learned of, whose rows name no sale — in a later run too, since the API
   * writes a guest's name without making the sign-in wait for it (a write queued behind a MySQL outage
   * may land after the next run's census).
   */
  unansweredSignIns?: number;
  /** The unknown guests earlier runs already put down to those sign-ins; this check adds the ones it does. */
  unknownGuests?: Set<string>;
}

type Row = Record<string, unknown>;

/**
 * The rows of every table of the explorer's database (libs/db's migrations made them) at one instant, by
 * primary key: taken as a run starts and compared after quiet, it tells which rows the run added.
 */
export class RowCensus {
  private constructor(private readonly keys: Map<string, { columns: string[]; seen: Set<string> }>) {}

  static async take(connection: Connection): Promise<RowCensus> {
    const [columns] = await connection.query<RowDataPacket[]>(
      `SELECT t.TABLE_NAME AS tableName, k.COLUMN_NAME AS columnName
         FROM information_schema.TABLES t
         LEFT JOIN information_schema.KEY_COLUMN_USAGE k
           ON k.TABLE_SCHEMA = t.TABLE_SCHEMA AND k.TABLE_NAME = t.TABLE_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'
        WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE = 'BASE TABLE'
        ORDER BY t.TABLE_NAME, k.ORDINAL_POSITION`,
    );
    const keys = new Map<string, { columns: string[]; seen: Set<string> }>();
    for (const { tableName, columnName } of columns as { tableName: string; columnName: string | null }[]) {
      const table = keys.get(tableName) ?? { columns: [], seen: new Set<string>() };
      if (columnName) table.columns.push(columnName);
      keys.set(tableName, table);
    }
    for (const [table, entry] of keys) {
      for (const row of await rowsOf(connection, table)) entry.seen.add(keyOf(row, entry.columns));
    }
    return new RowCensus(keys);
  }

  /** The rows added since the census, by table (a table with no primary key: every row, judged alike). */
  async added(connection: Connection): Promise<{ table: string; row: Row }[]> {
    const added: { table: string; row: Row }[] = [];
    for (const [table, entry] of this.keys) {
      for (const row of await rowsOf(connection, table)) {
        if (!entry.seen.has(keyOf(row, entry.columns))) added.push({ table, row });
      }
    }
    return added;
  }
}

async function rowsOf(connection: Connection, table: string): Promise<Row[]> {
  const [rows] = await connection.query<RowDataPacket[]>(`SELECT * FROM \`${table}\``);
  return rows as Row[];
}

function keyOf(row: Row, columns: string[]): string {
  const fields = columns.length > 0 ? columns : Object.keys(row);
  return fields
    .map((column) => String(row[column] instanceof Date ? (row[column] as Date).getTime() : row[column]))
    .join('|');
}

/** Between MySQL's clock (a sale's end) and the explorer's (an API's start): the same machine's. */
export const WARM_UP_LEFTOVER_GRACE_MS = 2_000;

/**
 * The startup warm-ups' sales still in MySQL at quiet (`id` → end, ms), and when the latest API start
 * began whose warm-up swept ended warm-up sales (ChaosCluster.lastLeftoverSweepAtMs): a warm-up sale a
 * process left (it died, or MySQL or Redis failed it during its warm-up) is the run's own until a sweep
 * that began after its end should have removed it.
 */
export interface WarmUpSales {
  endsAtMs: ReadonlyMap<string, number>;
  lastLeftoverSweepAtMs: number;
}

/**
 * "MySQL holds no row the run did not make": every row added between the run's start and quiet belongs
 * to a sale the explorer created (`sale_id`, or a sale's own `id`) and, where it names one, to a buyer it
 * signed in (`user_id`, a user's `id`); a payment to an order of such a sale; or to a startup warm-up's
 * sale that no API start since its end had to remove yet; or to one guest per sign-in whose answer never
 * came (over the exploration so far). Any other
 * row — another sale's (a warm-up's that the next start left behind), a user nobody signed in, a table the
 * explorer never writes to — is a violation.
 */
export function unexplainedRows(
  added: readonly { table: string; row: Row }[],
  made: ExplorerMade,
  orderNos: ReadonlySet<string>,
  warmUps: WarmUpSales = { endsAtMs: new Map(), lastLeftoverSweepAtMs: 0 },
): Violation[] {
  const byTable = new Map<string, Row[]>();
  const unknownGuests = made.unknownGuests ?? new Set<string>();
  for (const { table, row } of added) {
    if (explained(table, row, made, orderNos) || ofPendingWarmUp(table, row, warmUps)) continue;
    const guest = guestOfUnansweredSignIn(table, row, made, unknownGuests);
    if (guest !== undefined) {
      unknownGuests.add(guest);
      continue;
    }
    byTable.set(table, [...(byTable.get(table) ?? []), row]);
  }
  return [...byTable].map(([table, rows]) => ({
    invariant: 'MySQL holds no row the run did not make',
    detail: `${rows.length} new row(s) in ${table} of no sale or buyer of the explorer's, e.g. ${rows
      .slice(0, 3)
      .map((row) => JSON.stringify(row))
      .join('; ')}`,
  }));
}

/**
 * A user's own rows (no sale named) of a user the explorer never learned of, while fewer such users were
 * seen than sign-ins went unanswered: that user's id, else undefined.
 */
function guestOfUnansweredSignIn(
  table: string,
  row: Row,
  made: ExplorerMade,
  seen: ReadonlySet<string>,
): string | undefined {
  if (row['sale_id'] !== undefined) return undefined;
  const userId = row['user_id'] ?? (table === 'users' ? row['id'] : undefined);
  if (userId === undefined) return undefined;
  return seen.has(String(userId)) || seen.size < (made.unansweredSignIns ?? 0) ? String(userId) : undefined;
}

function ofPendingWarmUp(table: string, row: Row, warmUps: WarmUpSales): boolean {
  const saleId = row['sale_id'] ?? (table === 'sales' ? row['id'] : undefined);
  const endsAtMs = saleId === undefined ? undefined : warmUps.endsAtMs.get(String(saleId));
  return endsAtMs !== undefined && endsAtMs + WARM_UP_LEFTOVER_GRACE_MS > warmUps.lastLeftoverSweepAtMs;
}

function explained(table: string, row: Row, made: ExplorerMade, orderNos: ReadonlySet<string>): boolean {
  const saleId = row['sale_id'] ?? (table === 'sales' ? row['id'] : undefined);
  const userId = row['user_id'] ?? (table === 'users' ? row['id'] : undefined);
  if (table === 'payments') return orderNos.has(String(row['order_no']));
  if (saleId === undefined && userId === undefined) return false;
  if (saleId !== undefined && !made.saleIds.has(String(saleId))) return false;
  if (userId !== undefined && !made.userIds.has(String(userId))) return false;
  return true;
}
