import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two strategies of the demonstration (docs/architecture.md "Strategies"):
 * - `sales.fence`: the largest fencing token of the sale's Redis lock that MySQL has seen (`redis-lock`).
 *   A holder claims the row with its token before it reads and writes only while the row still carries
 *   it, so a holder whose lease ran out while it was paused cannot write over a newer holder's work.
 * - `sale_stock_segments`: a `db-segmented` sale's unsold units, split over a few rows so that buyers
 *   update different rows instead of all conflicting on the sale's one row. Like `orders`, no foreign
 *   key to `sales`: its shared lock on the parent row would be taken by every segment update.
 */
export class LockFenceAndStockSegments1764300000100 implements MigrationInterface {
  name = 'LockFenceAndStockSegments1764300000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales ADD COLUMN fence BIGINT UNSIGNED NOT NULL DEFAULT 0');
    await queryRunner.query(`
      CREATE TABLE sale_stock_segments (
        sale_id BIGINT UNSIGNED NOT NULL,
        segment_no SMALLINT UNSIGNED NOT NULL,
        available INT UNSIGNED NOT NULL,
        version INT UNSIGNED NOT NULL DEFAULT 0,
        PRIMARY KEY (sale_id, segment_no)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE sale_stock_segments');
    await queryRunner.query('ALTER TABLE sales DROP COLUMN fence');
  }
}
