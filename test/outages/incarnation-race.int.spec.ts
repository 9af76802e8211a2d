import { StockLeases } from '@flash-sale/stock';
import { StockLeaseRepository } from '@flash-sale/db';
import { onlyBucket, ReservationScripts, SaleState } from '@flash-sale/redis';
import { useStoreWorld } from '../support/stack-world';
import { createLiveSale } from '../support/fixtures';
import { gateCalls } from '../support/script-buyers';

/**
 * Two processes over one sale (say the API after a Redis restart and the worker's reconciliation):
 * one restarts the sale's incarnation — MySQL opens the next epoch, then Redis is loaded with it —
 * while the other verifies it in between. The verifier must not take that moment for a loss and
 * restart the sale once more (which would put the fresh lease in doubt).
 */
describe('incarnation restart seen mid-way by another process (real Redis and MariaDB)', () => {
  const w = useStoreWorld();

  /** A process's own lease protocol, as each app builds it. */
  const processLeases = (scripts: ReservationScripts, saleRedis = w.saleRedis) =>
    new StockLeases(new StockLeaseRepository(w.db), scripts, saleRedis, { leaseSize: 20, lowWater: 0 });
  const epochOf = async (saleId: string) =>
    Number((await w.db.query('SELECT redis_epoch FROM sales WHERE id = ?', [saleId]))[0].redis_epoch);

  /**
   * Process A restarts the sale (`lostEpoch` lost), and its load into Redis waits at a gate the test opens:
   * resolves once it is there, MySQL naming the next epoch while Redis still holds `lostEpoch`.
   */
  async function restartHeldAtLoad(saleId: string, lostEpoch: number) {
    const restarterScripts = new ReservationScripts(w.redis, w.keys);
    const { reached: loadWasReached, open: openGate } = gateCalls(restarterScripts, 'load');
    const restarting = processLeases(restarterScripts).restartIncarnation(saleId, lostEpoch);
    await loadWasReached;
    return { restarting, openGate };
  }

  /** Another process's lease protocol, which opens the gate as soon as it has read Redis's incarnation. */
  function leasesOpeningGateOnRead(openGate: () => void) {
    const otherRedis = new SaleState(w.redis, w.keys);
    const realIncarnation = otherRedis.incarnation.bind(otherRedis);
    jest.spyOn(otherRedis, 'incarnation').mockImplementation(async (id) => {
      const seen = await realIncarnation(id);
      openGate();
      return seen;
    });
    return processLeases(new ReservationScripts(w.redis, w.keys), otherRedis);
  }

  it('a verification during another process restart leaves the sale on the new incarnation', async () => {
    const { scripts, saleRedis } = w;
    const saleId = await createLiveSale(w.db, scripts, saleRedis, { stock: 40 });
    expect(await epochOf(saleId)).toBe(1);

    // Process A restarts the sale, and its load into Redis waits at a gate the test opens: MySQL
    // names epoch 2 while Redis still holds epoch 1.
    const { restarting, openGate } = await restartHeldAtLoad(saleId, 1);
    expect(await epochOf(saleId)).toBe(2); // opened in MySQL, not yet in Redis
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(1);

    // Process B verifies meanwhile: it reads Redis (epoch 1) before A's load, which goes on right after.
    const verifying = leasesOpeningGateOnRead(openGate).verifyIncarnation(saleId);
    expect(await restarting).toBe('opened');
    expect(await verifying).toBe('current');
    expect(await epochOf(saleId)).toBe(2);
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(2);
  });

  it('a restart whose load is slow (a busy machine) is waited for by the others: one new incarnation, not two', async () => {
    const { scripts, saleRedis } = w;
    const saleId = await createLiveSale(w.db, scripts, saleRedis, { stock: 40 });
    const before = await epochOf(saleId);

    // Process A restarts the sale; its load waits at the gate far longer than a load normally takes.
    const { restarting, openGate } = await restartHeldAtLoad(saleId, before);
    expect(await scripts.incarnationLoading(saleId)).toBe(before + 1);

    // Meanwhile B verifies (reconciliation, say) and C loads (a purchase told "not loaded"): both find
    // Redis behind MySQL's new epoch for the whole of A's load.
    const verifying = processLeases(new ReservationScripts(w.redis, w.keys)).verifyIncarnation(saleId);
    const loading = processLeases(new ReservationScripts(w.redis, w.keys)).ensureLoaded(saleId);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await epochOf(saleId)).toBe(before + 1); // neither took the slow load for a loss
    openGate();

    expect(await restarting).toBe('opened');
    expect(await verifying).toBe('current');
    expect(await loading).toBe('refreshed');
    expect(await epochOf(saleId)).toBe(before + 1);
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(before + 1);
    expect(await scripts.incarnationLoading(saleId)).toBeUndefined(); // its owner cleared the mark
  }, 20_000);

  it('a process that died mid-restart holds the others up only until its mark expires: then the sale restarts', async () => {
    const { scripts, saleRedis } = w;
    const saleId = await createLiveSale(w.db, scripts, saleRedis, { stock: 40 });
    const before = await epochOf(saleId);
    // What a process leaves when it is killed between MySQL opening the next epoch and the load.
    await scripts.markIncarnationLoading(saleId, before + 1, 3_000);
    expect(await new StockLeaseRepository(w.db).openEpoch(saleId, before)).toBe(before + 1);

    const startedAt = Date.now();
    const verified = await processLeases(new ReservationScripts(w.redis, w.keys)).verifyIncarnation(saleId);
    expect(verified).toBe('restarted');
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(2_500); // it did wait for the mark
    expect(await epochOf(saleId)).toBe(before + 2);
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(before + 2);
  }, 20_000);

  it('a new sale opened by one process while another loads it gets one first incarnation, nothing in doubt', async () => {
    const { saleRedis } = w;
    // A sale row as creation writes it, not yet opened (MySQL's epoch 0), as createLiveSale would leave
    // it before opening.
    const saleId = await createLiveSale(w.db, w.scripts, saleRedis, { stock: 40, opened: false });
    expect(await epochOf(saleId)).toBe(0);

    // The creating process opens it; another (a purchase told "not loaded", say) loads it at the same time.
    const [opening, loading] = await Promise.all([
      processLeases(new ReservationScripts(w.redis, w.keys)).openNewSale(saleId),
      processLeases(new ReservationScripts(w.redis, w.keys)).ensureLoaded(saleId),
    ]);
    expect([opening, loading].sort()).toEqual(['opened', 'refreshed']);
    expect(await epochOf(saleId)).toBe(1);
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(1);
    const [row] = (await w.db.query('SELECT available, leased, in_doubt FROM sales WHERE id = ?', [saleId])) as {
      available: number;
      leased: number;
      in_doubt: number;
    }[];
    // Both topped the sale up: every unit MySQL leased is in Redis's balance, none in doubt.
    expect(Number(row!.in_doubt)).toBe(0);
    expect(Number(row!.available) + Number(row!.leased)).toBe(40);
    expect(await saleRedis.remaining({ id: saleId, buckets: 1 })).toBe(Number(row!.leased));
  });

  it('a load during another process restart does not open a second incarnation', async () => {
    const { scripts, saleRedis } = w;
    const saleId = await createLiveSale(w.db, scripts, saleRedis, { stock: 40 });
    const before = await epochOf(saleId);

    // Process A restarts the sale; its load into Redis waits at a gate opened by B's look at Redis.
    const { restarting, openGate } = await restartHeldAtLoad(saleId, before);

    // Process B finds the sale behind in Redis (a purchase told "not loaded", say) and loads it.
    const loading = leasesOpeningGateOnRead(openGate).ensureLoaded(saleId);
    expect(await restarting).toBe('opened');
    expect(await loading).toBe('refreshed');
    expect(await epochOf(saleId)).toBe(before + 1);
    expect((await saleRedis.incarnation(onlyBucket(saleId)))?.epoch).toBe(before + 1);
  });
});
