import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ADMIN_PASSWORD,
  API_PORT,
  type MachineDeployment,
  startMachineDeployment,
} from '../../scripts/lib/machine-deployment.mjs';
import { machinesAvailable } from '../../scripts/lib/machines.mjs';
import { waitFor } from '../support/fixtures';

const available = machinesAvailable();
const describeWithMachines = available.ok ? describe : describe.skip;
if (!available.ok) console.warn(`partitions.int.spec skipped: ${available.why}`);

interface Answer {
  status: number | 'no answer';
  orderNo?: string;
}

/**
 * The deployment as machines (scripts/lib/machine-deployment.mjs), its links cut as a network fails:
 * silently, both ways, while buyers go on (docs/failure-model.md, "What each crash can cost").
 */
describeWithMachines('partitions on a real network of machines (namespaces, HAProxy, Redis Cluster, MariaDB)', () => {
  let dir: string;
  let deployment: MachineDeployment;
  let admin: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'partitions-spec-'));
    deployment = await startMachineDeployment({ dir });
    admin = (await call(deployment.baseUrl, 'POST', '/api/auth/admin', { password: ADMIN_PASSWORD })).body.token!;
  }, 180_000);

  afterAll(async () => {
    await deployment?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const address = (machine: string) => deployment.network.machines[machine]!.address;
  const apiOrigin = (machine: string) => `http://${address(machine)}:${API_PORT}`;

  const createSale = async (stock: number) =>
    (
      await call(
        deployment.baseUrl,
        'POST',
        '/api/admin/sales',
        {
          name: 'Partition sale',
          priceCents: 100,
          stock,
          perUserLimit: 1,
          endsAt: new Date(Date.now() + 3_600_000).toISOString(),
          purpose: 'load-test',
        },
        admin,
      )
    ).body.id as string;

  /** Buyers signed in, each with a submit token, through the balancer: ready before any fault. */
  const prepareBuyers = async (saleId: string, count: number) =>
    Promise.all(
      Array.from({ length: count }, async () => {
        const guest = (await call(deployment.baseUrl, 'POST', '/api/auth/guest', {})).body;
        const { token } = (
          await call(deployment.baseUrl, 'POST', `/api/sales/${saleId}/tokens`, undefined, guest.token)
        ).body;
        return { jwt: guest.token as string, token: token as string };
      }),
    );

  const buy = async (origin: string, saleId: string, buyer: { jwt: string; token: string }): Promise<Answer> => {
    try {
      const answer = await call(
        origin,
        'POST',
        `/api/sales/${saleId}/purchase`,
        { token: buyer.token },
        buyer.jwt,
        3_000,
      );
      return { status: answer.status, orderNo: answer.body?.orderNo };
    } catch {
      return { status: 'no answer' };
    }
  };

  const audit = async (saleId: string) =>
    (await call(deployment.baseUrl, 'GET', `/api/admin/sales/${saleId}/audit`, undefined, admin)).body;

  it('an API cut off from MySQL stops saying ready; the balancer moves the crowd to the other; healed, it is back', async () => {
    const saleId = await createSale(100);
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
        async () => (await call(apiOrigin('api-1'), 'GET', '/health/ready', undefined, undefined, 5_000)).status,
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
      const answers = await Promise.all(buyers.map((buyer) => buy(deployment.baseUrl, saleId, buyer)));
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
});

/** The fields of the answers this file reads. */
interface ReplyBody {
  token?: string;
  id?: string;
  orderNo?: string;
  ok?: boolean;
  held?: number;
}

/** One request; `{ status, body }` (the body parsed when JSON). Throws only when no answer came in time. */
async function call(
  origin: string,
  method: string,
  route: string,
  body?: unknown,
  token?: string,
  timeoutMs = 10_000,
): Promise<{ status: number; body: ReplyBody }> {
  const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  if (token) headers['authorization'] = `Bearer ${token}`;
  const response = await fetch(`${origin}${route}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON
  }
  return { status: response.status, body: (parsed ?? {}) as ReplyBody };
}
