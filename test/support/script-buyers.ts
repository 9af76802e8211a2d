import { OrderNumberGenerator, type SaleLayout } from '@flash-sale/domain';
import { buyerBucket } from '@flash-sale/redis';
import { issueTestToken } from './private-redis';
import type { SaleRedisAccess } from './test-redis';

const orderNumbers = new OrderNumberGenerator();

/** A fresh buyer id (`<name>-<n>`) whose records live in bucket `index` of the sale. */
export function buyerOfBucket(sale: SaleLayout, index: number, name: string): string {
  for (let n = 0; ; n++) if (buyerBucket(sale, `${name}-${n}`).index === index) return `${name}-${n}`;
}

/** One unit for `userId` through the real reservation script: `reserved`, `replayed`… or the refusal's code. */
export async function reserveOneUnit(
  on: Pick<SaleRedisAccess, 'scripts' | 'saleRedis'>,
  sale: SaleLayout,
  userId: string,
): Promise<string> {
  const { token } = await issueTestToken(on.saleRedis, sale, userId, 300);
  const result = await on.scripts.reserve({
    bucket: buyerBucket(sale, userId),
    userId,
    submitToken: token,
    quantity: 1,
    orderNo: orderNumbers.next(sale.id),
  });
  return result.kind === 'refused' ? result.code : result.kind;
}

/**
 * Holds every call of `target[method]` at a gate the test opens, then lets it run for real: `reached`
 * resolves when the first call arrives. For interleavings a test must choose (a grant recorded in MySQL
 * and not yet in Redis, an epoch opened in MySQL and not yet loaded).
 */
export function gateCalls<T extends object, K extends keyof T>(
  target: T,
  method: K,
): { reached: Promise<void>; open: () => void } {
  const real = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  (target as Record<K, unknown>)[method] = async (...args: unknown[]) => {
    arrived();
    await gate;
    return real(...args);
  };
  return { reached, open };
}
