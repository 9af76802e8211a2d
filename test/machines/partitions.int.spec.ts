import { mkdtempSync, rmSync } from 'node:fs';
import calculateSlot from 'cluster-key-slot';
import { Cluster, Redis } from 'ioredis';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import {
  ADMIN_PASSWORD,
  API_PORT,
  type MachineDeployment,
  startMachineDeployment,
} from '../../scripts/lib/machine-deployment.mjs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { ApiClient } from '../support/api-client';
import { waitFor } from '../support/fixtures';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`partitions.int.spec skipped: ${available.why}`);

/**
 * The deployment as machines (scripts/lib/machine-deployment.mjs), its links cut as a network fails:
 * silently, both ways, while buyers go on (docs/failure-model.md, "What each crash can cost").
 */
describeWithMachines('partitions on a real network of machines (namespaces, HAProxy, Redis Cluster, MariaDB)', () => {
  let dir: string;
  let deployment: MachineDeployment;
  /** Through the balancer, as buyers reach the deployment. */
  let balanced: ApiClient;
  /** Straight to api-1, as the balancer's health check does. */
  let api1: ApiClient;
  let admin: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'partitions-spec-'));
    deployment = await startMachineDeployment({ dir });
    balanced = new ApiClient(deployment.baseUrl);
    api1 = new ApiClient(`http://${deployment.network.machines['api-1']!.address}:${API_PORT}`);
    admin = await balanced.adminToken(ADMIN_PASSWORD);
  }, 180_000);

  afterAll(async () => {
    await balanced?.close();
    await api1?.close();
    await deployment?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Buyers signed in, each with a submit token, through the balancer: ready before any fault. */
  const prepareBuyers = async (saleId: string, count: number) =>
    Promise.all(
      (await balanced.guests(count, 20)).map(async (guest) => ({
        jwt: guest.token,
        token: await balanced.submitToken(saleId, guest.token),
      })),
    );

  /** The machine whose Redis master serves the sale's slot (a sale of one bucket: one hash tag). */
  const machineServing = async (saleId: string): Promise<string> => {
    const redis = new Cluster(deployment.redisMasters.map(({ host, port }) => ({ host, port })));
    try {
      const slot = calculateSlot(`{sale:${saleId}}`);
      const ranges = await redis.cluster('SLOTS');
      const [, , [host] = []] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      return Object.values(deployment.network.machines).find((machine) => machine.address === host)!.name;
    } finally {
      redis.disconnect();
    }
  };

  const audit = async (saleId: string) =>
    (await balanced.call<{ ok: boolean; held: number }>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin }))
      .body;

  it('an API cut off from MySQL stops saying ready; the balancer moves the crowd to the other; healed, it is back', async () => {
    const saleId = (await balanced.createSale(admin, { stock: 100, purpose: 'load-test' })).id;
    const buyers = await prepareBuyers(saleId, 40);
    await waitFor(
      'the balancer to have api-1 up before the cut',
      () => deployment.balancerView(),
      (view) => view['api-1']?.status === 'UP',
      30_000,
    );
    await deployment.network.cut('api-1', 'mysql-1');
    await deployment.network.cut('mysql-1', 'api-1');
    try {
      await waitFor(
        'api-1 to say it is not ready',
        async () => (await api1.call('GET', '/health/ready')).status,
        (status) => status === 503,
        30_000,
      );
      await waitFor(
        'the balancer to take api-1 out',
        () => deployment.balancerView(),
        (view) => view['api-1']?.status.startsWith('DOWN') === true,
        30_000,
      );
      const sentToApi1 = (await deployment.balancerView())['api-1']!.requests;
      const answers = await Promise.all(
        buyers.map((buyer) =>
          balanced.call('POST', `/api/sales/${saleId}/purchase`, { token: buyer.jwt, json: { token: buyer.token } }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(buyers.map(() => 202));
      expect((await deployment.balancerView())['api-1']!.requests).toBe(sentToApi1);
    } finally {
      await deployment.network.heal('api-1', 'mysql-1');
      await deployment.network.heal('mysql-1', 'api-1');
    }
    await waitFor(
      'the balancer to take api-1 back',
      () => deployment.balancerView(),
      (view) => view['api-1']?.status === 'UP',
      60_000,
    );
    await waitFor(
      'the sale to be written and audited clean',
      () => audit(saleId),
      (result) => result.ok === true && result.held === 40,
      60_000,
    );
  }, 180_000);

  it("an API cut off from the sale's Redis master answers 503 + retry-after in seconds, stops saying ready; the crowd buys through the other", async () => {
    const saleId = (await balanced.createSale(admin, { stock: 100, purpose: 'load-test' })).id;
    const [stranded, ...buyers] = await prepareBuyers(saleId, 31);
    const master = await machineServing(saleId);
    await waitFor(
      'the balancer to have api-1 up before the cut',
      () => deployment.balancerView(),
      (view) => view['api-1']?.status === 'UP',
      30_000,
    );
    // Silently, both ways: api-1's connection to that master stays open and its commands go unanswered.
    await deployment.network.cut('api-1', master);
    await deployment.network.cut(master, 'api-1');
    try {
      // A buyer whose request reached api-1 gets an answer within its Redis command deadline, not a hang.
      const started = Date.now();
      const cutOff = await api1.call<{ error: { code: string } }>('POST', `/api/sales/${saleId}/purchase`, {
        token: stranded!.jwt,
        json: { token: stranded!.token },
      });
      expect({ status: cutOff.status, code: cutOff.body.error.code }).toEqual({ status: 503, code: 'UNAVAILABLE' });
      expect(cutOff.headers['retry-after']).toBeTruthy();
      expect(Date.now() - started).toBeLessThan(8_000);
      const readiness = await waitFor(
        'api-1 to say it is not ready',
        () => api1.call<{ error?: Record<string, { message?: string }> }>('GET', '/health/ready'),
        (answer) => answer.status === 503,
        30_000,
      );
      expect(readiness.body.error?.['redis']?.message).toContain(deployment.network.machines[master]!.address);
      await waitFor(
        'the balancer to take api-1 out',
        () => deployment.balancerView(),
        (view) => view['api-1']?.status.startsWith('DOWN') === true,
        30_000,
      );
      const answers = await Promise.all(
        buyers.map((buyer) =>
          balanced.call('POST', `/api/sales/${saleId}/purchase`, { token: buyer.jwt, json: { token: buyer.token } }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(buyers.map(() => 202));
    } finally {
      await deployment.network.heal('api-1', master);
      await deployment.network.heal(master, 'api-1');
    }
    await waitFor(
      'the balancer to take api-1 back',
      () => deployment.balancerView(),
      (view) => view['api-1']?.status === 'UP',
      60_000,
    );
    // The stranded buyer's 503 meant "unknown": the same token, now, is their purchase (made late, or now).
    const replay = await api1.call('POST', `/api/sales/${saleId}/purchase`, {
      token: stranded!.jwt,
      json: { token: stranded!.token },
    });
    expect(replay.status).toBe(202);
    await waitFor(
      'the sale to be written and audited clean',
      () => audit(saleId),
      (result) => result.ok === true && result.held === 31,
      60_000,
    );
  }, 180_000);

  it('a replication link a long cut left silent after the heal: settle returns once the replica has caught up, and a WAIT there confirms at once', async () => {
    const saleId = (await balanced.createSale(admin, { stock: 10, purpose: 'load-test' })).id;
    const masterMachine = await machineServing(saleId);
    const master = new Redis({ host: deployment.network.machines[masterMachine]!.address, port: 6379 });
    const [, replicaHost, replicaPort] = /^slave0:ip=([^,]+),port=(\d+)/m.exec(await master.info('replication'))!;
    const replicaMachine = Object.values(deployment.network.machines).find((m) => m.address === replicaHost)!.name;
    const replica = new Redis({ host: replicaHost, port: Number(replicaPort) });
    const offsets = async () => ({
      master: Number(/^master_repl_offset:(\d+)/m.exec(await master.info('replication'))![1]),
      replica: Number(/^slave_repl_offset:(\d+)/m.exec(await replica.info('replication'))![1]),
    });
    // The sale's slot is that master's; writes every 100 ms keep data outstanding on the replication link
    // through the cut, so its TCP resends back off (0.2 s, 0.4 s … 12.8 s: the next lands ~25 s in).
    const key = `{sale:${saleId}}:replication-probe`;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        await master.incr(key);
        await sleep(100);
      }
    })();
    try {
      // Only the master's machine and its replica's: each still reaches the third, so nothing fails over.
      await deployment.network.cut(masterMachine, replicaMachine);
      await deployment.network.cut(replicaMachine, masterMachine);
      await sleep(18_000);
    } finally {
      await deployment.network.heal(masterMachine, replicaMachine);
      await deployment.network.heal(replicaMachine, masterMachine);
    }
    try {
      await sleep(2_000);
      // Healed, and yet nothing is carried: both ends call the link up, the replica is where the cut left it.
      const silent = await offsets();
      expect(/master_link_status:up/.test(await replica.info('replication'))).toBe(true);
      expect(silent.replica).toBeLessThan(silent.master);
      writing = false;
      await writer;
      const settling = Date.now();
      await deployment.settle();
      console.log(`settle waited ${Date.now() - settling} ms after the heal + 2 s for the silent link`);
      const settled = await offsets();
      expect(settled.replica).toBeGreaterThanOrEqual(silent.master);
      expect(await master.call('WAIT', 1, 1_000)).toBe(1);
    } finally {
      writing = false;
      await writer.catch(() => undefined);
      master.disconnect();
      replica.disconnect();
    }
  }, 180_000);
});
