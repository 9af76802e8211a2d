import { type HandoffStream, singleBucketSale } from '@flash-sale/redis';
import type { DataSource } from 'typeorm';
import { countRows, waitFor } from './fixtures';

/** Waits until a one-bucket sale's hand-off stream is empty: every entry written and acknowledged. */
export async function handOffDrained(handoff: HandoffStream, saleId: string, timeoutMs?: number): Promise<void> {
  await waitFor(
    'the stream emptied',
    () => handoff.backlog(singleBucketSale(saleId)),
    (n) => n === 0,
    timeoutMs,
  );
}

/**
 * Once the hand-off is drained: the sale has exactly one PENDING_PAYMENT row for each of `orders` and
 * no other row (no order lost, none written twice, none failed).
 */
export async function expectEveryOrderWrittenOnce(
  db: DataSource,
  handoff: HandoffStream,
  saleId: string,
  orders: readonly { orderNo: string }[],
): Promise<void> {
  await handOffDrained(handoff, saleId, 30_000);
  const count = (where: string) => countRows(db, `SELECT ${where} AS n FROM orders WHERE sale_id = ?`, [saleId]);
  expect(await count('COUNT(*)')).toBe(orders.length);
  expect(await count('COUNT(DISTINCT order_no)')).toBe(orders.length);
  expect(await count(`SUM(status = 'PENDING_PAYMENT')`)).toBe(orders.length);
  const written = (await db.query('SELECT order_no FROM orders WHERE sale_id = ?', [saleId])) as { order_no: string }[];
  const writtenOrderNos = new Set(written.map((row) => row.order_no));
  expect(orders.filter((order) => !writtenOrderNos.has(order.orderNo))).toEqual([]);
}

/** The sale's order rows (only those in `status`, when given): order number → buyer's user id. */
export async function orderOwners(db: DataSource, saleId: string, status?: string): Promise<Map<string, string>> {
  const rows = (await db.query(
    `SELECT order_no, user_id FROM orders WHERE sale_id = ?${status ? ' AND status = ?' : ''}`,
    status ? [saleId, status] : [saleId],
  )) as { order_no: string; user_id: string }[];
  return new Map(rows.map((row) => [row.order_no, row.user_id]));
}
