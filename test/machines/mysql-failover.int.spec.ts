import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import {
  ADMIN_PASSWORD,
  type MachineDeployment,
  startMachineDeployment,
} from '../../scripts/lib/machine-deployment.mjs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { ApiClient, inBatches } from '../support/api-client';
import { waitFor } from '../support/fixtures';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`mysql-failover.int.spec skipped: ${available.why}`);

const STOCK = 60;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface FailoverOutcome {
  /** The order numbers of every `202` the buyers were given. */
  promised: string[];
  /** Those the promoted primary holds, once the workers have had their time. */
  written: (timeoutMs: number) => Promise<string[]>;
  saleId: string;
}

/**
 * The schedule a MySQL primary failover is judged on (scripts/lib/mysql-machines.mjs): buyers buy through
 * the balancer while what the primary sends its replica is lost; mid-burst the primary is lost — its
 * process killed, or its machine cut off — and the replica promoted, the apps following its floating
 * address. Commits the workers were told of in that window are on the promoted replica only if the
 * primary waited for its receipt; and a writer whose commit was waiting on a primary cut off hears nothing
 * more on that connection, until its keepalive gives up on it (libs/db data-source.ts).
 */
async function buyThroughAFailover(
  { deployment, balanced, admin }: { deployment: MachineDeployment; balanced: ApiClient; admin: string },
  fence: 'kill' | 'isolate',
) {
  const saleId = (await balanced.createSale(admin, { stock: STOCK })).id;
  const buyers = await balanced.guests(STOCK, 20);
  const tokens = await inBatches(buyers, 20, (buyer) => balanced.submitToken(saleId, buyer.token));
  const { primary, replica } = deployment.mysqlPair.roles();
  await deployment.network.cut(primary, replica!);
  const buying = inBatches([...buyers.keys()], 10, (index) =>
    balanced.purchaseAsStorefront<{ orderNo?: string }>(saleId, buyers[index]!.token, tokens[index]!, 20),
  );
  await sleep(1_500);
  const failover = await deployment.mysqlPair.failover(fence);
  const answers = await buying;
  const promised = answers.filter(({ status }) => status === 202).map(({ body }) => body.orderNo!);
  const written = async (timeoutMs: number) => {
    const primary = await createConnection({ uri: deployment.databaseUrl });
    try {
      let found: string[] = [];
      await waitFor(
        'every promised order on the promoted primary',
        async () => {
          const [rows] = await primary.query<RowDataPacket[]>(
            "SELECT order_no FROM orders WHERE sale_id = ? AND status <> 'QUEUED'",
            [saleId],
          );
          found = rows.map((row) => String(row['order_no'])).filter((orderNo) => promised.includes(orderNo));
          return found;
        },
        (orders) => orders.length === promised.length,
        timeoutMs,
      ).catch(() => undefined);
      return found;
    } finally {
      await primary.end();
    }
  };
  return { failover, outcome: { promised, written, saleId } satisfies FailoverOutcome };
}

/** The deployment as machines for one describe block: started before its tests, torn down after them. */
function deploymentOf(mysqlReplication: 'semi-sync' | 'async') {
  const world = {} as { dir: string; deployment: MachineDeployment; balanced: ApiClient; admin: string };
  beforeAll(async () => {
    world.dir = mkdtempSync(join(tmpdir(), `mysql-failover-${mysqlReplication}-spec-`));
    world.deployment = await startMachineDeployment({ dir: world.dir, mysqlReplication });
    world.balanced = new ApiClient(world.deployment.baseUrl);
    world.admin = await world.balanced.adminToken(ADMIN_PASSWORD);
  }, 180_000);
  afterAll(async () => {
    await world.balanced?.close();
    await world.deployment?.stop();
    if (world.dir) rmSync(world.dir, { recursive: true, force: true });
  }, 60_000);
  return world;
}

describeWithMachines('a MySQL primary failover (namespaces, MariaDB semi-synchronous replication)', () => {
  const world = deploymentOf('semi-sync');

  const everyPromiseKept = async (outcome: FailoverOutcome) => {
    expect(outcome.promised.length).toBeGreaterThan(0);
    expect((await outcome.written(60_000)).sort()).toEqual([...outcome.promised].sort());
    // Both APIs may still be out of the balancer (not ready until their pools give up on the lost
    // primary's silent connections): its 503 + retry-after means "try again", as a client reads it.
    const audit = await world.balanced.callRetryingAfter<{ ok: boolean }>(
      'GET',
      `/api/admin/sales/${outcome.saleId}/audit`,
      { token: world.admin },
      60,
    );
    expect(audit.body).toMatchObject({ ok: true });
  };

  it('the primary killed mid-burst: the promoted replica holds every order a buyer was promised; the lost primary comes back as its replica', async () => {
    const { failover, outcome } = await buyThroughAFailover(world, 'kill');
    expect(failover).toEqual({ promoted: 'mysql-2', fenced: 'mysql-1' });
    await everyPromiseKept(outcome);

    await world.deployment.settle();
    expect(world.deployment.mysqlPair.roles()).toEqual({ primary: 'mysql-2', replica: 'mysql-1', fenced: undefined });
    // The rebuilt machine has every row, and follows: a purchase after the restore reaches it too.
    const laterSale = (await world.balanced.createSale(world.admin)).id;
    const buyer = await world.balanced.guest();
    const bought = await world.balanced.buy(laterSale, buyer.token);
    expect(bought.status).toBe(202);
    await world.balanced.orderWritten(bought.body.orderNo, buyer.token, 30_000);
    const rebuilt = await createConnection({
      host: world.deployment.mysql.primary,
      user: 'root',
      database: 'flash_sale',
    });
    try {
      await waitFor(
        'the rebuilt replica to hold the new order and every promised one',
        async () =>
          (
            await rebuilt.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM orders WHERE order_no IN (?)', [
              [...outcome.promised, bought.body.orderNo],
            ])
          )[0][0]!['n'],
        (n) => Number(n) === outcome.promised.length + 1,
        30_000,
      );
    } finally {
      await rebuilt.end();
    }
  }, 240_000);

  it("and back, the primary's machine cut off mid-burst: writers waiting on it give up on their silent connections and write every promised order to the promoted replica", async () => {
    const { failover, outcome } = await buyThroughAFailover(world, 'isolate');
    expect(failover).toEqual({ promoted: 'mysql-1', fenced: 'mysql-2' });
    await everyPromiseKept(outcome);
    await world.deployment.settle();
    expect(world.deployment.mysqlPair.roles()).toEqual({ primary: 'mysql-1', replica: 'mysql-2', fenced: undefined });
  }, 240_000);

  it('a primary that stopped waiting for its replica waits again once the deployment settles, and a failover is refused meanwhile', async () => {
    const { network, mysqlPair } = world.deployment;
    const primary = await createConnection({
      host: network.machines[mysqlPair.roles().primary]!.address,
      user: 'root',
    });
    const semiSync = async () =>
      Object.fromEntries(
        (
          await primary.query<RowDataPacket[]>(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_master_clients')",
          )
        )[0].map((row) => [row['Variable_name'], row['Value']]),
      );
    try {
      // As a primary left without its semi-synchronous client after a partition: it commits unprotected.
      await primary.query('SET GLOBAL rpl_semi_sync_master_enabled = OFF');
      expect((await semiSync())['Rpl_semi_sync_master_status']).toBe('OFF');
      expect(await mysqlPair.failover('kill')).toEqual({
        refused: expect.stringContaining('not waiting'),
      });

      await world.deployment.settle();
      expect(await semiSync()).toEqual({ Rpl_semi_sync_master_status: 'ON', Rpl_semi_sync_master_clients: '1' });
      const buyer = await world.balanced.guest();
      const bought = await world.balanced.buy((await world.balanced.createSale(world.admin)).id, buyer.token);
      expect(bought.status).toBe(202);
      await world.balanced.orderWritten(bought.body.orderNo, buyer.token, 30_000);
    } finally {
      await primary.end();
    }
  }, 120_000);
});

describeWithMachines(
  'a MySQL primary failover under asynchronous replication (what the semi-synchronous wait prevents)',
  () => {
    const world = deploymentOf('async');

    it('the same schedule loses orders the workers had written and the buyers were promised', async () => {
      const { failover, outcome } = await buyThroughAFailover(world, 'kill');
      expect(failover).toEqual({ promoted: 'mysql-2', fenced: 'mysql-1' });
      expect(outcome.promised.length).toBeGreaterThan(0);
      const written = await outcome.written(20_000);
      expect(written.length).toBeLessThan(outcome.promised.length);
    }, 240_000);
  },
);
