import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCode } from '@flash-sale/domain';
import type { RedisClient } from './redis-client';
import type { KeyBuilder } from './sale-keys';

/** Lua sources live in `libs/redis/lua`, one file per script, named `<name>-<numberOfKeys>.lua`. */
const LUA_DIR = join(__dirname, '..', 'lua');

const SCRIPTS = {
  fsReserve: { file: 'reserve-6.lua', numberOfKeys: 6 },
  fsRelease: { file: 'release-4.lua', numberOfKeys: 4 },
  fsPreload: { file: 'preload-5.lua', numberOfKeys: 5 },
} as const;

type ScriptName = keyof typeof SCRIPTS;
type ScriptArg = string | number;
type ScriptedClient = Record<ScriptName, (...keysThenArgs: ScriptArg[]) => Promise<unknown>>;

/** The one table that maps the reservation script's negative return codes to error codes. */
export const RESERVE_FAILURES: Readonly<Record<number, ErrorCode>> = {
  [-1]: ErrorCode.Unavailable, // sale not loaded into Redis
  [-2]: ErrorCode.SaleNotStarted,
  [-3]: ErrorCode.SaleEnded,
  [-4]: ErrorCode.TokenInvalid,
  [-5]: ErrorCode.LimitReached,
  [-6]: ErrorCode.SoldOut,
};
const SALE_NOT_LOADED = -1;
const ORDER_NUMBER_TAKEN = -7;

export interface ReserveInput {
  saleId: string;
  userId: string;
  token: string;
  quantity: number;
  orderNo: string;
}

export type ReserveResult =
  | { kind: 'reserved' | 'replayed'; orderNo: string; slot: number; quantity: number; reservedAt: Date }
  | { kind: 'refused'; code: ErrorCode; saleNotLoaded: boolean }
  | { kind: 'order-number-taken' };

export type ReleaseResult = 'released' | 'already-released' | 'unknown-reservation';

export interface PreloadSale {
  saleId: string;
  startsAt: Date;
  endsAt: Date;
  perUserLimit: number;
  stock: number;
}

/** An order MySQL holds units for; preload makes sure Redis counts it. */
export interface HoldingOrder {
  orderNo: string;
  userId: string;
  quantity: number;
  slot: number;
  reservedAt: Date;
}

/**
 * The only caller of the sale Lua scripts. Registers them with `defineCommand` (EVALSHA with a
 * transparent EVAL fallback) and turns their replies into typed results.
 */
export class ReservationScripts {
  private readonly scripted: ScriptedClient;

  constructor(
    client: RedisClient,
    private readonly keys: KeyBuilder,
  ) {
    for (const [name, script] of Object.entries(SCRIPTS)) {
      client.defineCommand(name, {
        numberOfKeys: script.numberOfKeys,
        lua: readFileSync(join(LUA_DIR, script.file), 'utf8'),
      });
    }
    this.scripted = client as unknown as ScriptedClient;
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const sale = this.keys.sale(input.saleId);
    const reply = await this.scripted.fsReserve(
      sale.meta,
      sale.stock,
      sale.buyers,
      sale.token(input.token),
      sale.reservations,
      sale.replays,
      input.userId,
      input.token,
      input.quantity,
      input.orderNo,
    );
    if (Array.isArray(reply)) {
      const [status, orderNo, slot, reservedAtMs, quantity] = reply as [number, string, number, number, number];
      return {
        kind: status === 1 ? 'reserved' : 'replayed',
        orderNo,
        slot,
        quantity,
        reservedAt: new Date(reservedAtMs),
      };
    }
    const code = Number(reply);
    if (code === ORDER_NUMBER_TAKEN) return { kind: 'order-number-taken' };
    const errorCode = RESERVE_FAILURES[code];
    if (errorCode === undefined) throw new Error(`reserve script returned an unknown code: ${String(reply)}`);
    return { kind: 'refused', code: errorCode, saleNotLoaded: code === SALE_NOT_LOADED };
  }

  async release(saleId: string, orderNo: string): Promise<ReleaseResult> {
    const sale = this.keys.sale(saleId);
    const reply = Number(
      await this.scripted.fsRelease(
        sale.stock,
        sale.buyers,
        sale.reservations,
        sale.returned,
        orderNo,
        this.keys.stockReturnedChannel,
        saleId,
      ),
    );
    if (reply === 1) return 'released';
    if (reply === 0) return 'already-released';
    return 'unknown-reservation';
  }

  async preload(
    input: PreloadSale,
    holdingOrders: readonly HoldingOrder[],
  ): Promise<{ sellable: number; unitsTaken: number }> {
    const sale = this.keys.sale(input.saleId);
    const orderArgs = holdingOrders.flatMap((order) => [
      order.orderNo,
      order.userId,
      order.quantity,
      order.slot,
      order.reservedAt.getTime(),
    ]);
    const [sellable, unitsTaken] = (await this.scripted.fsPreload(
      sale.meta,
      sale.stock,
      sale.buyers,
      sale.reservations,
      sale.returned,
      input.startsAt.getTime(),
      input.endsAt.getTime(),
      input.perUserLimit,
      input.stock,
      ...orderArgs,
    )) as [number, number];
    return { sellable, unitsTaken };
  }
}
