import type { DataSource } from 'typeorm';
import { OrderQueryRepository } from './order-query.repository';

/** How long a read that must see the latest writes waits for the replica before it asks the primary. */
const CATCH_UP_WITHIN_MS = 200;
/** The most the whole check may take (a replica cut off answers nothing): then the primary serves. */
const CHECK_WITHIN_MS = 500;
/** How long a replica found answering (or not) is taken to be so before it is asked again. */
const REPLICA_STATE_TTL_MS = 2_000;

type Flavor = 'mariadb' | 'mysql';

/**
 * Reads that may be served by a MySQL replica (`DATABASE_REPLICA_URL`; docs/operations.md "Running on
 * several machines"), so that the primary keeps its work for the writes. Two kinds:
 *
 * - `lagging`: reads whose readers accept a view a moment old (the admin's order pages and exports):
 *   the replica as it is.
 * - `current()`: reads that must show every write committed before they were asked (a buyer's own
 *   orders, right after buying or paying): the replica once it has applied the primary's position as
 *   of now — MariaDB's `MASTER_GTID_WAIT`, MySQL's `WAIT_FOR_EXECUTED_GTID_SET`, both with GTIDs on —
 *   waited for at most CATCH_UP_WITHIN_MS; otherwise (a lagging or stopped replica, no GTIDs, the
 *   replica unreachable) the primary.
 *
 * Without a replica both are the primary's; a replica that does not answer a `SELECT 1` within
 * CHECK_WITHIN_MS (down, or cut off by a partition) is left alone for REPLICA_STATE_TTL_MS.
 */
export class ReplicaReads {
  private readonly primaryOrders: OrderQueryRepository;
  private readonly replicaOrders: OrderQueryRepository | undefined;
  private flavor: Promise<Flavor> | undefined;
  private replicaState: { answers: boolean; until: number } | undefined;

  constructor(
    private readonly primary: DataSource,
    private readonly replica: DataSource | undefined,
  ) {
    this.primaryOrders = new OrderQueryRepository(primary);
    this.replicaOrders = replica && new OrderQueryRepository(replica);
  }

  /** Order reads that may be a moment behind. */
  async laggingOrders(): Promise<OrderQueryRepository> {
    if (!this.replicaOrders) return this.primaryOrders;
    return (await this.replicaAnswers()) ? this.replicaOrders : this.primaryOrders;
  }

  /** Order reads that see every write committed before this call. */
  async currentOrders(): Promise<OrderQueryRepository> {
    if (!this.replicaOrders || !(await this.replicaAnswers())) return this.primaryOrders;
    return (await within(this.replicaHasCaughtUp(), CHECK_WITHIN_MS, false)) ? this.replicaOrders : this.primaryOrders;
  }

  private async replicaAnswers(): Promise<boolean> {
    const now = Date.now();
    if (this.replicaState && now < this.replicaState.until) return this.replicaState.answers;
    const answers = await within(
      this.replica!.query('SELECT 1').then(
        () => true,
        () => false,
      ),
      CHECK_WITHIN_MS,
      false,
    );
    this.replicaState = { answers, until: Date.now() + REPLICA_STATE_TTL_MS };
    return answers;
  }

  /** Whether the replica has applied everything the primary had committed when this was asked. */
  private async replicaHasCaughtUp(): Promise<boolean> {
    try {
      const flavor = await (this.flavor ??= this.primaryFlavor());
      const [row] = (await this.primary.query(
        flavor === 'mariadb'
          ? 'SELECT @@GLOBAL.gtid_binlog_pos AS position'
          : 'SELECT @@GLOBAL.gtid_executed AS position',
      )) as { position: string | null }[];
      // No GTIDs on the primary: nothing to wait for that would prove the replica current.
      if (!row?.position) return false;
      const [waited] = (await this.replica!.query(
        flavor === 'mariadb'
          ? 'SELECT MASTER_GTID_WAIT(?, ?) AS result'
          : 'SELECT WAIT_FOR_EXECUTED_GTID_SET(?, ?) AS result',
        [row.position, CATCH_UP_WITHIN_MS / 1000],
      )) as { result: number | string | null }[];
      // 0: applied; -1 (MariaDB) or 1 (MySQL): not within the wait; NULL: the position was not understood.
      return waited?.result !== null && waited?.result !== undefined && Number(waited.result) === 0;
    } catch {
      this.flavor = undefined;
      return false;
    }
  }

  private async primaryFlavor(): Promise<Flavor> {
    const [row] = (await this.primary.query('SELECT VERSION() AS version')) as { version: string }[];
    return /mariadb/i.test(row?.version ?? '') ? 'mariadb' : 'mysql';
  }
}

/** `promise`'s value, or `otherwise` if it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(otherwise), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
