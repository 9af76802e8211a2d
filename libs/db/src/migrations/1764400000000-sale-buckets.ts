import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hot sales spread over buckets (docs/architecture.md "Hot sales: buckets"):
 * - `sales.buckets`: how many Redis buckets (hash slots) a redis-lua sale's leased stock is spread over.
 * - `stock_leases.bucket`: the bucket a lease was granted to; `stock_leases.return_key`: the give-back a
 *   `RETURNED` row records, unique, so units a bucket gave back are added to `available` once.
 * - `orders.bucket`: the bucket an order was reserved in, so a bucket's incarnation can be checked against
 *   the units MySQL wrote from it alone.
 */
export class SaleBuckets1764400000000 implements MigrationInterface {
  name = 'SaleBuckets1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales ADD COLUMN buckets TINYINT UNSIGNED NOT NULL DEFAULT 1');
    await queryRunner.query(
      `ALTER TABLE stock_leases ADD COLUMN bucket TINYINT UNSIGNED NOT NULL DEFAULT 0,
         ADD COLUMN return_key VARCHAR(64) NULL, ADD UNIQUE KEY ux_stock_leases_return_key (return_key)`,
    );
    await queryRunner.query('ALTER TABLE orders ADD COLUMN bucket TINYINT UNSIGNED NOT NULL DEFAULT 0');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE orders DROP COLUMN bucket');
    await queryRunner.query(
      'ALTER TABLE stock_leases DROP INDEX ux_stock_leases_return_key, DROP COLUMN return_key, DROP COLUMN bucket',
    );
    await queryRunner.query('ALTER TABLE sales DROP COLUMN buckets');
  }
}
