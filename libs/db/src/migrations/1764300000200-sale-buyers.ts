import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which store may have sold to a buyer of a Redis-backed sale (docs/failure-model.md, "The Redis-down
 * fallback"). A buyer is recorded `redis` before Redis ever holds a submit token of theirs, so a buyer
 * without that mark cannot have a reservation in Redis that MySQL has not seen; the fallback marks the
 * buyers it sells to `mysql` in the same transaction as their order, and sells to nobody marked `redis`.
 * `fallback_orders` counts the fallback's orders, so moving a buyer back to Redis can check that Redis
 * was loaded with every one of them.
 */
export class SaleBuyers1764300000200 implements MigrationInterface {
  name = 'SaleBuyers1764300000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sale_buyers (
        sale_id BIGINT UNSIGNED NOT NULL,
        user_id VARCHAR(64) NOT NULL,
        channel VARCHAR(8) NOT NULL,
        fallback_orders INT UNSIGNED NOT NULL DEFAULT 0,
        PRIMARY KEY (sale_id, user_id)
      ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE sale_buyers');
  }
}
