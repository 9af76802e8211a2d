import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Connection, createConnection, type RowDataPacket } from 'mysql2/promise';
import {
  ADMIN_PASSWORD,
  type MachineDeployment,
  startMachineDeployment,
} from '../../scripts/lib/machine-deployment.mjs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { ApiClient } from '../support/api-client';
import { waitFor } from '../support/fixtures';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`replica-reads.int.spec skipped: ${available.why}`);

interface ListedOrder {
  orderNo: string;
  status: string;
}

/**
 * MySQL on two machines (scripts/lib/machine-deployment.mjs: a MariaDB primary on mysql-1, its replica on
 * mysql-2, the API given both): the admin's order pages read the replica as it is, a buyer's own orders
 * read it only once it holds every write made before they asked (libs/db replica-reads.ts). The replica is
 * held behind by stopping its SQL thread, as a replica that lags.
 */
describeWithMachines('reads on a MySQL replica that lags (namespaces, MariaDB replication)', () => {
  let dir: string;
  let deployment: MachineDeployment;
  let balanced: ApiClient;
  let admin: string;
  let primary: Connection;
  let replica: Connection;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'replica-reads-spec-'));
    deployment = await startMachineDeployment({ dir });
    balanced = new ApiClient(deployment.baseUrl);
    admin = await balanced.adminToken(ADMIN_PASSWORD);
    primary = await createConnection({ host: deployment.mysql.primary, user: 'root', database: 'flash_sale' });
    replica = await createConnection({ host: deployment.mysql.replica, user: 'root', database: 'flash_sale' });
  }, 180_000);

  afterAll(async () => {
    await replica?.query('START SLAVE SQL_THREAD').catch(() => undefined);
    await Promise.all([primary?.end(), replica?.end()]);
    await balanced?.close();
    await deployment?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const rowsOf = async (connection: Connection, orderNo: string) =>
    (await connection.query<RowDataPacket[]>('SELECT status FROM orders WHERE order_no = ?', [orderNo]))[0];
  const ownOrders = async (jwt: string) =>
    (await balanced.call<ListedOrder[]>('GET', '/api/orders', { token: jwt })).body;
  const adminPage = async (saleId: string) =>
    (await balanced.call<{ items: ListedOrder[] }>('GET', `/api/admin/sales/${saleId}/orders`, { token: admin })).body
      .items;

  it("a buyer sees their written order at once though the replica lags; the admin's page shows it once the replica has it", async () => {
    const saleId = (await balanced.createSale(admin, { stock: 10 })).id;
    const buyer = await balanced.guest();
    const token = await balanced.submitToken(saleId, buyer.token);

    await replica.query('STOP SLAVE SQL_THREAD');
    const bought = await balanced.call<{ orderNo: string }>('POST', `/api/sales/${saleId}/purchase`, {
      token: buyer.token,
      json: { token },
    });
    expect(bought.status).toBe(202);
    const { orderNo } = bought.body;
    await waitFor(
      'the order written on the primary',
      () => rowsOf(primary, orderNo),
      (rows) => rows.length === 1,
      30_000,
    );
    // The replica has not applied it: whatever shows it below read the primary.
    expect(await rowsOf(replica, orderNo)).toEqual([]);

    // The buyer's list: the written order (PENDING_PAYMENT, the row's), not the reservation Redis still
    // holds (QUEUED), which is all a read of the lagging replica would have found.
    expect((await ownOrders(buyer.token)).find((order) => order.orderNo === orderNo)?.status).toBe('PENDING_PAYMENT');
    // The admin's page reads the replica as it is: not there yet.
    expect((await adminPage(saleId)).map((order) => order.orderNo)).not.toContain(orderNo);

    await replica.query('START SLAVE SQL_THREAD');
    await waitFor(
      "the admin's page to show the order once the replica applied it",
      () => adminPage(saleId),
      (orders) => orders.some((order) => order.orderNo === orderNo),
      30_000,
    );
    // Caught up, the replica serves the buyer too, with the same answer.
    expect((await ownOrders(buyer.token)).find((order) => order.orderNo === orderNo)?.status).toBe('PENDING_PAYMENT');
  }, 120_000);
});
