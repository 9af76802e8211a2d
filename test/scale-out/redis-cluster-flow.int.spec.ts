import { countRows, waitFor } from '../support/fixtures';
import { useStackWorld } from '../support/stack-world';

interface Audit {
  ok: boolean;
  oversold: number;
  lostReservations: number;
  held: number;
  ordersByStatus: Record<string, number>;
}

/**
 * The whole purchase flow — sign in, submit token, reserve and hand off (one script), the nudged
 * writer, payment, the audit — with Redis as a real three-master cluster: every sale's keys and its
 * hand-off stream share one slot, the queue lives on its own hash tag, and nothing crosses slots.
 */
describe('the purchase flow on a real three-master Redis Cluster (API, worker, MariaDB)', () => {
  const w = useStackWorld({ redis: 'cluster', database: true });

  it('sells several sales at once to exactly their stock, writes every order, takes payment, audits ok', async () => {
    const { stack, db, admin } = w;
    const saleIds: string[] = [];
    for (const name of ['North', 'South', 'East']) {
      saleIds.push((await stack.client.createSale(admin, { name, priceCents: 500, stock: 30 })).id);
    }

    const attempts = await Promise.all(
      saleIds.flatMap((saleId) =>
        Array.from({ length: 45 }, async () => {
          const guest = await stack.client.guest();
          const token = await stack.client.submitToken(saleId, guest.token);
          // A 503 + retry-after ("nothing happened") is resent, as the storefront does.
          const answer = await stack.client.purchaseAsStorefront<{ orderNo: string; status: string }>(
            saleId,
            guest.token,
            token,
          );
          return { saleId, guest, answer };
        }),
      ),
    );
    for (const saleId of saleIds) {
      const statuses = attempts.filter((attempt) => attempt.saleId === saleId).map((attempt) => attempt.answer.status);
      expect(statuses.filter((status) => status === 202)).toHaveLength(30);
      expect(statuses.filter((status) => status === 410)).toHaveLength(15);
    }

    const orders = (saleId: string) =>
      countRows(db, `SELECT COUNT(*) AS n FROM orders WHERE sale_id = ? AND status = 'PENDING_PAYMENT'`, [saleId]);
    for (const saleId of saleIds)
      await waitFor(
        `the orders of sale ${saleId}`,
        () => orders(saleId),
        (n) => n === 30,
      );

    // One buyer pays: the order moves on through the provider's callback as anywhere else.
    const buyer = attempts.find((attempt) => attempt.answer.status === 202)!;
    const paid = await stack.client.call<{ status: string }>('POST', `/api/orders/${buyer.answer.body.orderNo}/pay`, {
      token: buyer.guest.token,
    });
    expect(paid.status).toBeLessThan(300);
    await waitFor(
      'the payment',
      async () =>
        (
          await stack.client.call<{ status: string }>('GET', `/api/orders/${buyer.answer.body.orderNo}`, {
            token: buyer.guest.token,
          })
        ).body.status,
      (status) => status === 'PAID',
    );

    for (const saleId of saleIds) {
      const audit = await stack.client.call<Audit>('GET', `/api/admin/sales/${saleId}/audit`, { token: admin });
      expect(audit.body).toMatchObject({ ok: true, oversold: 0, lostReservations: 0, held: 30 });
      expect(audit.body.ordersByStatus['QUEUED']).toBe(0);
    }
  });

  it("/metrics tells each master's persistence: the three masters, none with an AOF here", async () => {
    const metrics = (await w.stack.client.raw('GET', '/metrics')).text;
    const persistence = [...metrics.matchAll(/^flash_sale_redis_aof_enabled\{node="([^"]+)"\} (\d+)$/gm)];
    expect(persistence.map(([, node]) => node).sort()).toEqual([...w.cluster.nodes].sort());
    expect(persistence.map(([, , aof]) => aof)).toEqual(['0', '0', '0']);
    expect(metrics).toMatch(/^flash_sale_dependency_up\{dependency="redis"\} 1$/m);
  });
});
