import type { SaleDefinition } from '@flash-sale/domain';
import type { WaitingRoomScripts } from '@flash-sale/redis';
import type { SalesService } from '../sales/sales.service';
import { RoomStock } from './room-stock';

const SALE = { id: '5' } as SaleDefinition;

/** MySQL's answer for the sale's units, which the test sets; reads counted; a read fails when told to. */
function world() {
  const state = { remaining: 0, reads: 0, failing: false };
  const sales = {
    remainingSettled: async () => {
      state.reads += 1;
      if (state.failing) throw new Error('MySQL is away');
      return { remaining: state.remaining, settled: true };
    },
  } as unknown as SalesService;
  const scripts = { soldUnits: async () => 0 } as unknown as WaitingRoomScripts;
  return { stock: new RoomStock(sales, scripts), state };
}

/** `fn` with Date.now() reading `at` (ms after the start). */
async function at<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const spy = jest.spyOn(Date, 'now').mockReturnValue(1_000_000 + ms);
  try {
    return await fn();
  } finally {
    spy.mockRestore();
  }
}

describe('RoomStock', () => {
  it('answers from a reading under half a second old without reading again', async () => {
    const { stock, state } = world();
    expect((await at(0, () => stock.of(SALE))).remaining).toBe(0);
    state.remaining = 3;
    expect((await at(400, () => stock.of(SALE))).remaining).toBe(0);
    expect(state.reads).toBe(1);
  });

  it('a reading a little older answers while the next is read; the next poll has the new one', async () => {
    const { stock, state } = world();
    await at(0, () => stock.of(SALE));
    state.remaining = 3;
    expect((await at(700, () => stock.of(SALE))).remaining).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.reads).toBe(2);
    expect((await at(750, () => stock.of(SALE))).remaining).toBe(3);
  });

  it('after a lull the poll waits for a new reading: units that came back meanwhile are not told sold out', async () => {
    const { stock, state } = world();
    const soldOut = await at(0, () => stock.of(SALE));
    expect(soldOut).toMatchObject({ remaining: 0, settled: true });
    state.remaining = 2; // an order expired in the lull
    expect(await at(5_000, () => stock.of(SALE))).toMatchObject({ remaining: 2, settled: true });
  });

  it('after a lull, a reading that cannot be made keeps the old count but says sold out to nobody', async () => {
    const { stock, state } = world();
    await at(0, () => stock.of(SALE));
    state.failing = true;
    expect(await at(5_000, () => stock.of(SALE))).toMatchObject({ remaining: 0, settled: false });
  });
});
