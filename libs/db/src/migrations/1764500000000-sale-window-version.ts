import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sales.window_version`: bumped by every edit of what Redis copies of a sale (its window and per-user
 * limit), and copied into Redis with it, so a load that read an older row never puts an older window
 * back (docs/failure-model.md "A sale's window").
 */
export class SaleWindowVersion1764500000000 implements MigrationInterface {
  name = 'SaleWindowVersion1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales ADD COLUMN window_version INT UNSIGNED NOT NULL DEFAULT 0');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales DROP COLUMN window_version');
  }
}
