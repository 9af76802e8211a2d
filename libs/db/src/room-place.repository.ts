import type { DataSource } from 'typeorm';

/** A buyer's row in a room (see the `room_places` migration). */
export interface RoomPlaceRow {
  userId: string;
  place: number;
  /** When their pass expires (ms since the epoch), or undefined: not admitted yet. */
  passExpiresMs?: number;
  /** MySQL holds an order of theirs in the sale: their pass is spent. */
  bought: boolean;
}

/**
 * The `room_places` table: the waiting room's promises to each buyer (their place, their pass), written
 * before the buyer is told, read back only when Redis lost the room (apps/api waiting-room).
 */
export class RoomPlaceRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Buyers' places in line, new or moved to the back (a pass that expired unused): not admitted. One
   * statement for many buyers (a crowd joining at once).
   */
  async recordPlaces(places: readonly { saleId: string; userId: string; place: number }[]): Promise<void> {
    if (places.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO room_places (sale_id, user_id, place) VALUES ${places.map(() => '(?, ?, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE place = VALUES(place), pass_expires_at = NULL`,
      places.flatMap(({ saleId, userId, place }) => [saleId, userId, place]),
    );
  }

  /** Buyers admitted: when each one's pass expires (ms). One statement for many buyers. */
  async recordPasses(passes: readonly { saleId: string; userId: string; passExpiresMs: number }[]): Promise<void> {
    if (passes.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO room_places (sale_id, user_id, place, pass_expires_at) VALUES ${passes.map(() => '(?, ?, 0, ?)').join(', ')}
       ON DUPLICATE KEY UPDATE pass_expires_at = VALUES(pass_expires_at)`,
      passes.flatMap(({ saleId, userId, passExpiresMs }) => [saleId, userId, passExpiresMs]),
    );
  }

  /** The room's buyers (the admin's funnel): every one who joined, and those who hold or spent a pass. */
  async buyerCounts(saleId: string): Promise<{ joined: number; admitted: number }> {
    const [row] = (await this.dataSource.query(
      'SELECT COUNT(*) AS joined, COUNT(pass_expires_at) AS admitted FROM room_places WHERE sale_id = ?',
      [saleId],
    )) as { joined: string | number; admitted: string | number }[];
    return { joined: Number(row?.joined ?? 0), admitted: Number(row?.admitted ?? 0) };
  }

  /** Every buyer of the room, with whether MySQL holds an order of theirs in the sale. */
  async placesOf(saleId: string): Promise<RoomPlaceRow[]> {
    const rows = (await this.dataSource.query(
      `SELECT p.user_id, p.place, p.pass_expires_at,
              EXISTS (SELECT 1 FROM orders o WHERE o.sale_id = p.sale_id AND o.user_id = p.user_id) AS bought
         FROM room_places p WHERE p.sale_id = ?`,
      [saleId],
    )) as { user_id: string; place: number; pass_expires_at: string | null; bought: number | string }[];
    return rows.map((row) => ({
      userId: row.user_id,
      place: Number(row.place),
      passExpiresMs: row.pass_expires_at === null ? undefined : Number(row.pass_expires_at),
      bought: Number(row.bought) === 1,
    }));
  }
}
