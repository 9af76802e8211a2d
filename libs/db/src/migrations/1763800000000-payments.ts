import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One payment per order (unique order_no) with its own out-trade number for the provider, and the
 * provider's transaction id unique: a callback delivered twice finds its transaction already recorded
 * and is acknowledged without being applied again.
 */
export class Payments1763800000000 implements MigrationInterface {
  name = 'Payments1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE payments (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        order_no VARCHAR(40) NOT NULL,
        out_trade_no VARCHAR(64) NOT NULL,
        transaction_id VARCHAR(64) NULL,
        amount_cents INT UNSIGNED NOT NULL,
        status VARCHAR(20) NOT NULL,
        created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        paid_at DATETIME(3) NULL,
        PRIMARY KEY (id),
        UNIQUE KEY uq_payments_order_no (order_no),
        UNIQUE KEY uq_payments_out_trade_no (out_trade_no),
        UNIQUE KEY uq_payments_transaction_id (transaction_id)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
    `);
    // The expiry and recovery jobs look orders up by status and age.
    await queryRunner.query('CREATE INDEX idx_orders_status_expires ON orders (status, expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX idx_orders_status_expires ON orders');
    await queryRunner.query('DROP TABLE payments');
  }
}
