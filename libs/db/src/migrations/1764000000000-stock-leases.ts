import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stock leases (docs/architecture.md "Who owns the stock"). The sale's row splits its stock into
 * `available` (MySQL may sell it) + `leased` (handed to Redis, not yet an order) + held units
 * (orders), and remembers which Redis incarnation of the sale is current:
 * - `redis_epoch`: the incarnation Redis sells on; a new one starts whenever Redis lost the sale's state.
 * - `in_doubt`: the part of `leased` granted to earlier incarnations; returned to `available` once
 *   every surviving hand-off of theirs is written (then `settled_epoch` moves up to them).
 * `stock_leases` is the ledger: one row per grant (its id makes the Redis grant idempotent) and one
 * RETURNED row per settlement. `orders.lease_epoch` says which incarnation's lease an order came from
 * (NULL: sold by MySQL itself — the db-* strategies and the Redis-down fallback).
 */
export class StockLeases1764000000000 implements MigrationInterface {
  name = 'StockLeases1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE sales
         ADD COLUMN leased INT UNSIGNED NOT NULL DEFAULT 0,
         ADD COLUMN in_doubt INT UNSIGNED NOT NULL DEFAULT 0,
         ADD COLUMN redis_epoch INT UNSIGNED NOT NULL DEFAULT 0,
         ADD COLUMN settled_epoch INT UNSIGNED NOT NULL DEFAULT 0`,
    );
    await queryRunner.query('ALTER TABLE orders ADD COLUMN lease_epoch INT UNSIGNED NULL');
    await queryRunner.query(
      `CREATE TABLE stock_leases (
         id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
         sale_id BIGINT UNSIGNED NOT NULL,
         epoch INT UNSIGNED NOT NULL,
         units INT UNSIGNED NOT NULL,
         state VARCHAR(12) NOT NULL,
         created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
         updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
         KEY ix_stock_leases_sale_state (sale_id, state)
       ) ENGINE=InnoDB`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE stock_leases');
    await queryRunner.query('ALTER TABLE orders DROP COLUMN lease_epoch');
    await queryRunner.query(
      'ALTER TABLE sales DROP COLUMN leased, DROP COLUMN in_doubt, DROP COLUMN redis_epoch, DROP COLUMN settled_epoch',
    );
  }
}
