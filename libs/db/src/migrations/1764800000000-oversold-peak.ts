import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sales.oversold_peak`: the most units the sale's orders ever held beyond its stock, recorded by every
 * cancel and expiry just before it gives units back (docs/failure-model.md "The audit"), so an oversell
 * stays in the audit after the orders that made it are gone. The orders' index by sale and status gains
 * `quantity`, so the sum of a sale's held units that each give-back (and /metrics) reads comes from the
 * index alone.
 */
export class OversoldPeak1764800000000 implements MigrationInterface {
  name = 'OversoldPeak1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales ADD COLUMN oversold_peak INT UNSIGNED NOT NULL DEFAULT 0');
    await queryRunner.query(
      'ALTER TABLE orders DROP INDEX idx_orders_sale_status, ADD INDEX idx_orders_sale_status (sale_id, status, quantity)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE orders DROP INDEX idx_orders_sale_status, ADD INDEX idx_orders_sale_status (sale_id, status)',
    );
    await queryRunner.query('ALTER TABLE sales DROP COLUMN oversold_peak');
  }
}
