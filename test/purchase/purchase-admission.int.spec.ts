import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { WorkerModule } from '../../apps/worker/src/worker.module';
import { inBatches, type ApiResponse } from '../support/api-client';
import { waitFor } from '../support/fixtures';
import type { RunningStack } from '../support/running-stack';
import { useStackWorld } from '../support/stack-world';

interface ErrorBody {
  error?: { code: string };
}

async function buyers(stack: RunningStack, saleId: string, count: number) {
  return inBatches(
    Array.from({ length: count }, (_, i) => i),
    16,
    async (i) => {
      const buyer = await stack.client.guest(`Buyer ${i}`);
      return { ...buyer, submitToken: await stack.client.submitToken(saleId, buyer.token) };
    },
  );
}

function purchase(stack: RunningStack, saleId: string, buyer: { token: string; submitToken: string }) {
  return stack.client.call<ErrorBody & { orderNo?: string }>('POST', `/api/sales/${saleId}/purchase`, {
    token: buyer.token,
    json: { token: buyer.submitToken },
  });
}

describe('load shedding: a hand-off backlog over its bound answers purchases 503 at once', () => {
  // No worker at first: accepted purchases stay in their sale's hand-off stream, which is the backlog.
  const w = useStackWorld({ worker: false, env: { SHED_MAX_BACKLOG: '3' } });
  let worker: INestApplicationContext | undefined;

  afterEach(async () => {
    await worker?.close();
  });

  it('sheds with retry-after while the backlog is over the bound, counts it, and admits the same token after', async () => {
    const { stack, admin, testEnv } = w;
    const saleId = (await stack.client.createSale(admin, { stock: 50 })).id;
    const people = await buyers(stack, saleId, 8);
    for (const buyer of people.slice(0, 4)) expect((await purchase(stack, saleId, buyer)).status).toBe(202);

    // The backlog (4 > 3) is sampled every 250 ms; from then on purchases are shed.
    const late = people[4]!;
    const shed = await waitFor(
      'a shed purchase',
      () => purchase(stack, saleId, late),
      (response: ApiResponse<ErrorBody>) => response.status !== 202,
      5_000,
    );
    expect(shed.status).toBe(503);
    expect(shed.body.error?.code).toBe('UNAVAILABLE');
    expect(Number(shed.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(shed.headers['x-request-id']).toBeTruthy();
    const others = await Promise.all(people.slice(5).map((buyer) => purchase(stack, saleId, buyer)));
    expect(others.map((response) => response.status)).toEqual([503, 503, 503]);

    const metrics = await stack.client.raw('GET', '/metrics');
    const shedCount = Number(/flash_sale_purchases_shed_total\{reason="backlog"\} (\d+)/.exec(metrics.text)?.[1]);
    expect(shedCount).toBeGreaterThanOrEqual(4);
    expect(metrics.text).toMatch(/flash_sale_purchases_total\{outcome="UNAVAILABLE"\} [1-9]/);

    // Nothing was done for them: once a worker drains the queue, the same tokens buy.
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(testEnv.config), { logger: false });
    const admitted = await waitFor(
      'purchases admitted again',
      () => purchase(stack, saleId, late),
      (response) => response.status === 202,
      20_000,
    );
    expect(admitted.body.orderNo).toBeTruthy();
  });
});

describe('per-sale limit: one sale takes at most its purchase rate, across all buyers', () => {
  const w = useStackWorld({ env: { RATE_LIMIT_SALE_PURCHASES_POINTS: '5', RATE_LIMIT_SALE_PURCHASES_SECONDS: '60' } });

  it('admits 5 of 12 concurrent buyers on one sale (429 for the rest); another sale is unaffected', async () => {
    const { stack, admin } = w;
    const hot = (await stack.client.createSale(admin, { stock: 50 })).id;
    const calm = (await stack.client.createSale(admin, { stock: 50 })).id;
    const crowd = await buyers(stack, hot, 12);
    const responses = await Promise.all(crowd.map((buyer) => purchase(stack, hot, buyer)));
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(5).fill(202), ...Array(7).fill(429)]);
    for (const refused of responses.filter((response) => response.status === 429)) {
      expect(refused.body.error?.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const [elsewhere] = await buyers(stack, calm, 1);
    expect((await purchase(stack, calm, elsewhere!)).status).toBe(202);
  });
});

describe('order of answers: the sold-out answer counts no rate limit (docs/api.md’s sold-out exception), 401 still first', () => {
  const w = useStackWorld({ env: { RATE_LIMIT_PURCHASES_POINTS: '3', RATE_LIMIT_PURCHASES_SECONDS: '60' } });

  it('a buyer hammering a sold-out sale past the limit keeps getting 410, never 429; without a token, 401', async () => {
    const { stack, admin } = w;
    const saleId = (await stack.client.createSale(admin, { stock: 1 })).id;
    const [first, second] = await buyers(stack, saleId, 2);
    expect((await purchase(stack, saleId, first!)).status).toBe(202);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++) statuses.push((await purchase(stack, saleId, second!)).status);
    // The limit is three: the first 410 came from Redis, every later one from the local flag, counting nothing.
    expect(statuses).toEqual([410, 410, 410, 410, 410, 410]);
    // A purchase that can change something is still counted: on a live sale the same buyer's limit holds.
    const live = (await stack.client.createSale(admin, { stock: 10 })).id;
    const [liveBuyer] = await buyers(stack, live, 1);
    const liveStatuses: number[] = [];
    for (let attempt = 0; attempt < 4; attempt++) liveStatuses.push((await purchase(stack, live, liveBuyer!)).status);
    expect(liveStatuses).toEqual([202, 202, 202, 429]);
    const anonymous = await stack.client.call<ErrorBody>('POST', `/api/sales/${saleId}/purchase`, {
      json: { token: second!.submitToken },
    });
    expect(anonymous.status).toBe(401);
  });
});

describe('load shedding: event-loop delay over its bound answers purchases 503 at once', () => {
  // The API runs in this process: blocking this event loop is blocking the API's.
  const w = useStackWorld({
    worker: false,
    env: { SHED_MAX_EVENT_LOOP_DELAY_MS: '150', SHED_RETRY_AFTER_SECONDS: '2' },
  });

  it('a blocked event loop sheds the next purchase (retry-after, counted by reason), then admits again', async () => {
    const { stack, admin } = w;
    const saleId = (await stack.client.createSale(admin, { stock: 10 })).id;
    const [buyer] = await buyers(stack, saleId, 1);
    const shed = await waitFor(
      'a purchase shed after a stall',
      async () => {
        const stalledUntil = Date.now() + 400;
        while (Date.now() < stalledUntil) {
          // a 400 ms stall, as a CPU-bound burst would cause
        }
        await new Promise((resolve) => setTimeout(resolve, 20)); // the sampler's overdue turn runs first
        return purchase(stack, saleId, buyer!);
      },
      (response) => response.status === 503,
      10_000,
    );
    expect(shed.body.error?.code).toBe('UNAVAILABLE');
    expect(shed.headers['retry-after']).toBe('2');
    const metrics = await stack.client.raw('GET', '/metrics');
    expect(metrics.text).toMatch(/flash_sale_purchases_shed_total\{reason="event-loop"\} [1-9]/);
    const admitted = await waitFor(
      'the purchase admitted once the loop is calm',
      () => purchase(stack, saleId, buyer!),
      (response) => response.status === 202,
      10_000,
    );
    expect(admitted.body.orderNo).toBeTruthy();
  });
});
