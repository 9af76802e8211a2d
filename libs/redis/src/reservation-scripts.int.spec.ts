import { issueTestToken } from '../../../test/support/private-redis';
import { ErrorCode, OrderNumberGenerator } from '@flash-sale/domain';
import { createRedisClient, type RedisClient } from './redis-client';
import { ReservationScripts, type ReserveResult } from './reservation-scripts';
import { SaleState } from './sale-state';
import type { KeyBuilder } from './sale-keys';
import { createTestRedis, TEST_REDIS_URL } from '../../../test/support/test-redis';
import { onlyBucket, singleBucketSale } from './sale-keys';

const HOUR = 3_600_000;
const orderNumbers = new OrderNumberGenerator();

describe('reservation scripts (real Redis)', () => {
  let redis: RedisClient;
  let keys: KeyBuilder;
  let cleanup: () => Promise<void>;
  let scripts: ReservationScripts;
  let repo: SaleState;
  let nextSaleId = 1;

  beforeAll(() => {
    ({ redis, keys, cleanup } = createTestRedis());
    scripts = new ReservationScripts(redis, keys);
    repo = new SaleState(redis, keys);
  });
  afterAll(() => cleanup());

  function saleInput(
    saleId: string,
    options: { stock: number; perUserLimit?: number; startsInMs?: number; endsInMs?: number },
    epoch = 1,
  ) {
    return {
      saleId,
      stock: options.stock,
      perUserLimit: options.perUserLimit ?? 1,
      startsAt: new Date(Date.now() + (options.startsInMs ?? -HOUR)),
      endsAt: new Date(Date.now() + (options.endsInMs ?? HOUR)),
      epoch,
      windowVersion: 0,
    };
  }

  /** Loads a sale as incarnation 1 and grants it one lease of its whole stock. */
  async function loadSale(options: { stock: number; perUserLimit?: number; startsInMs?: number; endsInMs?: number }) {
    const saleId = String(nextSaleId++);
    await scripts.load(onlyBucket(saleId), saleInput(saleId, options), []);
    await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', options.stock);
    return saleId;
  }

  async function buy(saleId: string, userId: string, token?: string, quantity = 1): Promise<ReserveResult> {
    const submitToken = token ?? (await issueTestToken(repo, saleId, userId, 60)).token;
    return scripts.reserve({
      bucket: onlyBucket(saleId),
      userId,
      submitToken,
      quantity,
      orderNo: orderNumbers.next(saleId),
    });
  }

  const refusal = (code: ErrorCode) => expect.objectContaining({ kind: 'refused', code });

  describe('return codes', () => {
    it('reserves: takes stock, consumes the token, records the reservation and the buyer', async () => {
      const saleId = await loadSale({ stock: 3 });
      const { token } = await issueTestToken(repo, saleId, 'alice', 60);
      const result = await buy(saleId, 'alice', token);
      expect(result).toMatchObject({ kind: 'reserved', slot: 1, quantity: 1 });
      if (result.kind !== 'reserved') throw new Error('unreachable');
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(2);
      expect(await redis.exists(keys.sale(saleId).token(token))).toBe(0);
      expect(await repo.reservation(singleBucketSale(saleId), result.orderNo)).toMatchObject({
        userId: 'alice',
        quantity: 1,
        slot: 1,
      });
      expect(await repo.reservationsOf(onlyBucket(saleId), 'alice')).toHaveLength(1);
    });

    it('-1: a sale that was never loaded', async () => {
      const result = await buy('999999', 'alice', 'some-token');
      expect(result).toEqual({ kind: 'refused', code: ErrorCode.Unavailable, saleNotLoaded: true });
    });

    it('-2: before the start; -3: after the end', async () => {
      expect(await buy(await loadSale({ stock: 1, startsInMs: HOUR, endsInMs: 2 * HOUR }), 'a')).toEqual(
        refusal(ErrorCode.SaleNotStarted),
      );
      expect(await buy(await loadSale({ stock: 1, startsInMs: -2 * HOUR, endsInMs: -HOUR }), 'a')).toEqual(
        refusal(ErrorCode.SaleEnded),
      );
    });

    it('-4: unknown, expired, another user’s or another sale’s token', async () => {
      const saleId = await loadSale({ stock: 5 });
      const otherSale = await loadSale({ stock: 5 });
      expect(await buy(saleId, 'alice', 'never-issued-token')).toEqual(refusal(ErrorCode.TokenInvalid));

      const bobs = await issueTestToken(repo, saleId, 'bob', 60);
      expect(await buy(saleId, 'alice', bobs.token)).toEqual(refusal(ErrorCode.TokenInvalid));

      const forOtherSale = await issueTestToken(repo, otherSale, 'alice', 60);
      expect(await buy(saleId, 'alice', forOtherSale.token)).toEqual(refusal(ErrorCode.TokenInvalid));

      const expiring = await issueTestToken(repo, saleId, 'alice', 60);
      await redis.pexpire(keys.sale(saleId).token(expiring.token), 1);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await buy(saleId, 'alice', expiring.token)).toEqual(refusal(ErrorCode.TokenInvalid));
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(5);
    });

    it('-5: per-user limit, counted in units, checked before stock', async () => {
      const saleId = await loadSale({ stock: 10, perUserLimit: 2 });
      expect(await buy(saleId, 'alice', undefined, 3)).toEqual(refusal(ErrorCode.LimitReached));
      expect(await buy(saleId, 'alice', undefined, 2)).toMatchObject({ kind: 'reserved', quantity: 2 });
      expect(await buy(saleId, 'alice')).toEqual(refusal(ErrorCode.LimitReached));
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(8);

      const soldOut = await loadSale({ stock: 1, perUserLimit: 1 });
      await buy(soldOut, 'alice');
      // Sold out AND over the limit: docs/api.md answers LIMIT_REACHED first.
      expect(await buy(soldOut, 'alice')).toEqual(refusal(ErrorCode.LimitReached));
    });

    it('-6: sold out, including asking for more than is left', async () => {
      const saleId = await loadSale({ stock: 2, perUserLimit: 5 });
      expect(await buy(saleId, 'alice', undefined, 3)).toEqual(refusal(ErrorCode.SoldOut));
      expect(await buy(saleId, 'alice', undefined, 2)).toMatchObject({ kind: 'reserved' });
      expect(await buy(saleId, 'bob')).toEqual(refusal(ErrorCode.SoldOut));
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(0);
    });

    it('-7: an order number the sale already holds is refused, nothing changes', async () => {
      const saleId = await loadSale({ stock: 5 });
      const first = await buy(saleId, 'alice');
      if (first.kind !== 'reserved') throw new Error('expected a reservation');
      const { token } = await issueTestToken(repo, saleId, 'bob', 60);
      const clash = await scripts.reserve({
        bucket: onlyBucket(saleId),
        userId: 'bob',
        submitToken: token,
        quantity: 1,
        orderNo: first.orderNo,
      });
      expect(clash).toEqual({ kind: 'order-number-taken' });
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(4);
      expect(await buy(saleId, 'bob', token)).toMatchObject({ kind: 'reserved' });
    });

    it('replay: the same token by the same buyer returns the same reservation; by another buyer it is invalid', async () => {
      const saleId = await loadSale({ stock: 5, perUserLimit: 3 });
      const { token } = await issueTestToken(repo, saleId, 'alice', 60);
      const first = await buy(saleId, 'alice', token, 2);
      const again = await buy(saleId, 'alice', token, 1);
      if (first.kind !== 'reserved') throw new Error('expected a reservation');
      expect(again).toEqual({ ...first, kind: 'replayed' });
      expect(await buy(saleId, 'mallory', token)).toEqual(refusal(ErrorCode.TokenInvalid));
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(3);
    });

    it('a refused attempt leaves the token usable', async () => {
      const saleId = await loadSale({ stock: 1, perUserLimit: 1 });
      const first = await buy(saleId, 'alice');
      const { token } = await issueTestToken(repo, saleId, 'bob', 60);
      expect(await buy(saleId, 'bob', token)).toEqual(refusal(ErrorCode.SoldOut));
      expect(await buy(saleId, 'bob', token)).toEqual(refusal(ErrorCode.SoldOut));
      if (first.kind !== 'reserved') throw new Error('expected a reservation');
      await scripts.release(onlyBucket(saleId), first.orderNo);
      // Released units go back to MySQL, which leases them again.
      await scripts.grantLease(onlyBucket(saleId), 1, 'lease-2', 1);
      expect(await buy(saleId, 'bob', token)).toMatchObject({ kind: 'reserved' });
    });
  });

  describe('release', () => {
    it('frees the buyer’s units and slot exactly once, and leaves the units to MySQL', async () => {
      const saleId = await loadSale({ stock: 1, perUserLimit: 1 });
      const reserved = await buy(saleId, 'alice');
      if (reserved.kind !== 'reserved') throw new Error('expected a reservation');
      const results = await Promise.all([1, 2, 3, 4].map(() => scripts.release(onlyBucket(saleId), reserved.orderNo)));
      expect(results.sort()).toEqual(['already-released', 'already-released', 'already-released', 'released']);
      expect(await repo.remaining(singleBucketSale(saleId))).toBe(0);
      expect(await scripts.release(onlyBucket(saleId), 'S1-NOSUCHORDER')).toBe('unknown-reservation');
      expect(await buy(saleId, 'alice')).toEqual(refusal(ErrorCode.SoldOut));
      // Once MySQL leases the unit again, alice may buy it, and gets slot 1 back.
      await scripts.grantLease(onlyBucket(saleId), 1, 'lease-2', 1);
      expect(await buy(saleId, 'alice')).toMatchObject({ kind: 'reserved', slot: 1 });
    });
  });

  describe('leases and incarnations', () => {
    it('sells only granted units; a lease id is granted once; a grant to another incarnation is refused', async () => {
      const saleId = String(nextSaleId++);
      expect(await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', 5)).toEqual({ kind: 'wrong-epoch' }); // not loaded
      expect(await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }), [])).toEqual({
        kind: 'opened',
        balance: 0,
        added: 0,
      });
      expect(await buy(saleId, 'alice')).toEqual(refusal(ErrorCode.SoldOut));
      expect(await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', 2)).toEqual({ kind: 'granted', balance: 2 });
      expect(await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', 2)).toEqual({
        kind: 'already-granted',
        balance: 2,
      });
      expect(await scripts.grantLease(onlyBucket(saleId), 2, 'lease-2', 2)).toEqual({ kind: 'wrong-epoch' });
      expect(await buy(saleId, 'alice')).toMatchObject({ kind: 'reserved', epoch: 1, balance: 1 });
      expect(await buy(saleId, 'bob')).toMatchObject({ kind: 'reserved', epoch: 1, balance: 0 });
      expect(await buy(saleId, 'carol')).toEqual(refusal(ErrorCode.SoldOut));
    });

    it('a refresh keeps the balance and adds what MySQL sold, with its token; a new incarnation starts empty', async () => {
      const saleId = await loadSale({ stock: 10, perUserLimit: 1 });
      const alice = await buy(saleId, 'alice');
      if (alice.kind !== 'reserved') throw new Error('expected a reservation');
      const soldByMySql = {
        orderNo: orderNumbers.next(saleId),
        userId: 'carol',
        quantity: 1,
        slot: 1,
        reservedAt: new Date(),
        submitToken: 'carols-fallback-token',
        holding: true,
      };
      // The orders Redis did not know are announced on the stock-returned channel (local sold-out flags drop).
      const listener = createRedisClient({ url: TEST_REDIS_URL, clusterNodes: [] });
      const announced: string[] = [];
      listener.on('message', (_channel: string, message: string) => announced.push(message));
      await listener.subscribe(keys.stockReturnedChannel);
      expect(await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }), [soldByMySql])).toEqual({
        kind: 'refreshed',
        balance: 9,
        added: 1,
      });
      // Loaded again: nothing new for Redis, nothing announced.
      expect(await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }), [soldByMySql])).toEqual({
        kind: 'refreshed',
        balance: 9,
        added: 0,
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      listener.disconnect();
      expect(announced).toEqual([saleId]);
      expect(await buy(saleId, 'carol')).toEqual(refusal(ErrorCode.LimitReached));
      // The fallback's token replays its order on Redis too, marked as MySQL's (epoch 0).
      expect(await buy(saleId, 'carol', 'carols-fallback-token')).toMatchObject({
        kind: 'replayed',
        orderNo: soldByMySql.orderNo,
        epoch: 0,
      });

      // Incarnation 2 (Redis lost data): nothing sellable until a lease of epoch 2; limits survive.
      expect(await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }, 2), [])).toEqual({
        kind: 'opened',
        balance: 0,
        added: 0,
      });
      expect((await repo.snapshot(singleBucketSale(saleId))).grants.size).toBe(0);
      expect(await scripts.grantLease(onlyBucket(saleId), 1, 'lease-1', 10)).toEqual({ kind: 'wrong-epoch' });
      await scripts.grantLease(onlyBucket(saleId), 2, 'lease-9', 3);
      expect(await buy(saleId, 'alice')).toEqual(refusal(ErrorCode.LimitReached));
      expect(await buy(saleId, 'dave')).toMatchObject({ kind: 'reserved', epoch: 2 });
      // A late load of an older incarnation changes nothing.
      expect(await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }, 1), [])).toEqual({
        kind: 'superseded',
      });
      expect(await repo.snapshot(singleBucketSale(saleId))).toMatchObject({ epoch: 2, remaining: 2, reservedUnits: 1 });
    });
    it('an order that gave its units back is loaded as spent: its token replays it, its buyer holds nothing', async () => {
      const saleId = await loadSale({ stock: 10, perUserLimit: 1 });
      // A copy of Redis from before Erin bought: her token is there, unused.
      const { token: spent } = await issueTestToken(repo, saleId, 'erin', 60);
      const cancelled = {
        orderNo: orderNumbers.next(saleId),
        userId: 'erin',
        quantity: 1,
        slot: 1,
        reservedAt: new Date(),
        submitToken: spent,
        holding: false,
      };
      await scripts.load(onlyBucket(saleId), saleInput(saleId, { stock: 10 }, 2), [cancelled]);
      await scripts.grantLease(onlyBucket(saleId), 2, 'lease-e', 3);
      expect(await buy(saleId, 'erin', spent)).toMatchObject({
        kind: 'replayed',
        orderNo: cancelled.orderNo,
        epoch: 0,
      });
      expect((await repo.snapshot(singleBucketSale(saleId))).returned.get(cancelled.orderNo)).toBe(1);
      // Her cancelled order no longer counts against her limit: a new token buys.
      expect(await buy(saleId, 'erin')).toMatchObject({ kind: 'reserved', epoch: 2 });
    });
  });

  describe('under real concurrency', () => {
    it('5,000 concurrent calls from 1,000 users on stock 300: exactly 300 reserved, nobody above the limit', async () => {
      const perUserLimit = 2;
      const saleId = await loadSale({ stock: 300, perUserLimit });
      const users = Array.from({ length: 1000 }, (_, i) => `user${i}`);
      const tokens = await Promise.all(
        users.flatMap((userId) =>
          [1, 2, 3, 4, 5].map(async () => ({ userId, ...(await issueTestToken(repo, saleId, userId, 120)) })),
        ),
      );
      // 16 separate connections so calls from different clients really interleave at the server.
      const clients = Array.from({ length: 16 }, () => createRedisClient({ url: TEST_REDIS_URL, clusterNodes: [] }));
      const clientScripts = clients.map((client) => new ReservationScripts(client, keys));
      try {
        const results = await Promise.all(
          tokens.map(({ userId, token }, i) =>
            clientScripts[i % clientScripts.length]!.reserve({
              bucket: onlyBucket(saleId),
              userId,
              submitToken: token,
              quantity: 1,
              orderNo: orderNumbers.next(saleId),
            }),
          ),
        );
        const reserved = results.filter((result) => result.kind === 'reserved');
        const refusedCodes = new Set(results.flatMap((result) => (result.kind === 'refused' ? [result.code] : [])));
        expect(reserved).toHaveLength(300);
        // Every refusal is one of these two (which ones occur depends on how the calls interleave).
        expect([...refusedCodes].every((code) => [ErrorCode.LimitReached, ErrorCode.SoldOut].includes(code))).toBe(
          true,
        );
        expect(refusedCodes.has(ErrorCode.SoldOut)).toBe(true);
        expect(await repo.remaining(singleBucketSale(saleId))).toBe(0);

        // Judge from the reservation records themselves, not from the counters the script keeps.
        const { reservations } = await repo.snapshot(singleBucketSale(saleId));
        expect(reservations.reduce((units, reservation) => units + reservation.quantity, 0)).toBe(300);
        const unitsByUser = new Map<string, number>();
        for (const reservation of reservations) {
          unitsByUser.set(reservation.userId, (unitsByUser.get(reservation.userId) ?? 0) + reservation.quantity);
        }
        expect(Math.max(...unitsByUser.values())).toBeLessThanOrEqual(perUserLimit);
        expect(new Set(reservations.map((reservation) => reservation.orderNo)).size).toBe(300);
      } finally {
        clients.forEach((client) => client.disconnect());
      }
    });
  });
});
