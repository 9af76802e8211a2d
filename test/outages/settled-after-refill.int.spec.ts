import { StockLeaseRepository } from '@flash-sale/db';
import { StockLeases } from '@flash-sale/stock';
import { SaleCatalog } from '../../apps/api/src/sales/sale-catalog';
import { SoldOutGate } from '../../apps/api/src/purchase/strategies/redis-lua/sold-out-gate';
import { useStackWorld } from '../support/stack-world';

interface SaleRow {
  available: number;
  in_doubt: number;
  redis_epoch: number;
}

/**
 * Units in doubt after a lost incarnation are settled back to `available` by the worker's reconciliation,
 * at a moment of its own. A buyer proving SOLD_OUT reads MySQL twice — the refill finds nothing to lease,
 * then the reservation asks whether units are in doubt — and a settlement landing between the two reads
 * moved the units where neither read looked. The sale has them to sell: nobody may be told SOLD_OUT, and
 * no sold-out flag may stand in front of them (real Redis and MariaDB; no worker, so the test settles).
 */
describe('units settled from doubt while a buyer proves the sale sold out', () => {
  const w = useStackWorld({ database: true, worker: false, env: { SOLD_OUT_FLAG_TTL_MS: '600000' } });
  const row = async (saleId: string): Promise<SaleRow> => {
    const [found] = await w.db.query('SELECT available, in_doubt, redis_epoch FROM sales WHERE id = ?', [saleId]);
    return { available: Number(found.available), in_doubt: Number(found.in_doubt), redis_epoch: found.redis_epoch };
  };

  /** A live sale whose whole stock was leased to an incarnation Redis has lost: every unit in doubt. */
  async function saleAllInDoubt(stock: number): Promise<string> {
    const saleId = (await w.client.createSale(w.admin, { stock, perUserLimit: 2 })).id;
    const leases = w.stack.api.get(StockLeases);
    expect(await row(saleId)).toMatchObject({ available: 0, in_doubt: 0 });
    await leases.restartIncarnation(saleId, (await row(saleId)).redis_epoch);
    expect(await row(saleId)).toMatchObject({ available: 0, in_doubt: stock });
    return saleId;
  }

  it('the buyer whose refill found nothing, just before the settlement, is asked to retry and then sold a unit', async () => {
    const saleId = await saleAllInDoubt(3);
    const leases = w.stack.api.get(StockLeases);
    const realRefill = leases.refill.bind(leases);
    let settledUnits: number | undefined;
    const refill = jest.spyOn(leases, 'refill').mockImplementation(async (...args) => {
      const leased = await realRefill(...args);
      // Reconciliation's settlement, right after the refill read MySQL empty.
      settledUnits ??= await new StockLeaseRepository(w.db).settle(saleId);
      return leased;
    });
    const guest = await w.client.guest();
    const token = await w.client.submitToken(saleId, guest.token);
    const purchase = () =>
      w.client.call<{ orderNo?: string; error?: { code: string } }>('POST', `/api/sales/${saleId}/purchase`, {
        token: guest.token,
        json: { token },
      });
    try {
      const first = await purchase();
      expect(settledUnits).toBe(3);
      expect({ status: first.status, code: first.body.error?.code }).toEqual({ status: 503, code: 'UNAVAILABLE' });
      expect(first.headers['retry-after']).toBeTruthy();
      // The same token again: this refill finds the settled units and leases them.
      const again = await purchase();
      expect(again.status).toBe(202);
      expect(again.body.orderNo).toBeTruthy();
    } finally {
      refill.mockRestore();
    }
    expect(await row(saleId)).toMatchObject({ available: 0, in_doubt: 0 });
  });

  it('a sold-out reading taken once the units are back in MySQL sets no flag', async () => {
    const saleId = await saleAllInDoubt(2);
    // Settled, and no buyer has come since to lease them: Redis's balance is 0, MySQL holds 2.
    expect(await new StockLeaseRepository(w.db).settle(saleId)).toBe(2);
    const sale = await w.stack.api.get(SaleCatalog).get(saleId);
    const gate = w.stack.api.get(SoldOutGate);
    gate.noteSoldOut(sale);
    await gate.learning(saleId);
    // A flag here would answer every buyer 410 for the flag's whole life, and none of them would lease the units.
    expect(gate.isFlagged(saleId)).toBe(false);
    const guest = await w.client.guest();
    const token = await w.client.submitToken(saleId, guest.token);
    const bought = await w.client.callRetryingAfter('POST', `/api/sales/${saleId}/purchase`, {
      token: guest.token,
      json: { token },
    });
    expect(bought.status).toBe(202);
  });
});
