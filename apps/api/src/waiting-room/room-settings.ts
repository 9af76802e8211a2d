import type { SaleDefinition } from '@flash-sale/domain';
import type { RoomSettings } from '@flash-sale/redis';

/** A room's keys outlive its sale by this much: a late poll still finds its ticket and answers `ended`. */
const KEEP_AFTER_END_MS = 3_600_000;

/** What Redis holds of a sale's room, from the sale as MySQL holds it; undefined for a sale without one. */
export function roomSettingsOf(sale: SaleDefinition): RoomSettings | undefined {
  const room = sale.waitingRoom;
  if (!room) return undefined;
  return {
    admitPerSecond: room.admitPerSecond,
    maxShopping: room.maxShopping ?? 0,
    passMs: room.passSeconds * 1000,
    startsAtMs: sale.startsAt.getTime(),
    expireAtMs: sale.endsAt.getTime() + KEEP_AFTER_END_MS,
  };
}
