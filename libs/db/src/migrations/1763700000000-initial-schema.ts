import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Plain SQL that runs unchanged on MySQL 8 and MariaDB 10.11.
 *
 * `orders.sale_id` deliberately has no FOREIGN KEY: InnoDB checks one by taking a shared lock on the
 * parent `sales` row for every inserted order, and the worker then takes an exclusive lock on that
 * same row to decrement stock. Two writers each holding the shared lock and wanting the exclusive one
 * deadlock, on the hottest row of the system. Only the worker inserts orders, always for a sale it
 * has just read, so the constraint buys nothing here.
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sales (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        name VARCHAR(120) NOT NULL,
        description VARCHAR(2000) NULL,
        image_url VARCHAR(500) NULL,
        price_cents INT UNSIGNED NOT NULL,
        stock INT UNSIGNED NOT NULL,
        available INT UNSIGNED NOT NULL,
        version INT UNSIGNED NOT NULL DEFAULT 0,
        per_user_limit INT UNSIGNED NOT NULL,
        starts_at DATETIME(3) NOT NULL,
        ends_at DATETIME(3) NOT NULL,
        strategy VARCHAR(20) NOT NULL,
        payment_timeout_seconds INT UNSIGNED NOT NULL,
        created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        PRIMARY KEY (id),
        CONSTRAINT chk_sales_available CHECK (available <= stock),
        CONSTRAINT chk_sales_window CHECK (ends_at > starts_at)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
    `);
    await queryRunner.query(`
      CREATE TABLE orders (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
        order_no VARCHAR(40) NOT NULL,
        sale_id BIGINT UNSIGNED NOT NULL,
        user_id VARCHAR(64) NOT NULL,
        user_slot TINYINT UNSIGNED NULL,
        quantity INT UNSIGNED NOT NULL,
        amount_cents INT UNSIGNED NOT NULL,
        status VARCHAR(20) NOT NULL,
        version INT UNSIGNED NOT NULL DEFAULT 0,
        failure_reason VARCHAR(200) NULL,
        reserved_at DATETIME(3) NOT NULL,
        expires_at DATETIME(3) NULL,
        paid_at DATETIME(3) NULL,
        created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
        updated_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
        PRIMARY KEY (id),
        UNIQUE KEY uq_orders_order_no (order_no),
        UNIQUE KEY uq_orders_sale_user_slot (sale_id, user_id, user_slot),
        KEY idx_orders_user (user_id, id),
        KEY idx_orders_sale_status (sale_id, status)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE orders');
    await queryRunner.query('DROP TABLE sales');
  }
}
