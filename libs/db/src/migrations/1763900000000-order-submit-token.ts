import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders made synchronously in MySQL (the db-* strategies and the Redis-down fallback) remember the
 * submit token that made them: unique, so a replayed token finds its order instead of making another.
 * (Redis-backed orders keep that mapping in Redis, next to their reservation.)
 */
export class OrderSubmitToken1763900000000 implements MigrationInterface {
  name = 'OrderSubmitToken1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE orders ADD COLUMN submit_token VARCHAR(255) NULL');
    await queryRunner.query('CREATE UNIQUE INDEX uq_orders_submit_token ON orders (submit_token)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX uq_orders_submit_token ON orders');
    await queryRunner.query('ALTER TABLE orders DROP COLUMN submit_token');
  }
}
