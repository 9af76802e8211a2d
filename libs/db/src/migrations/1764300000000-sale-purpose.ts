import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why a sale exists: `shop` (the storefront's) or test data — `load-test` (k6), `bench`, `demo`. The
 * storefront lists only shop sales that have not ended; the index serves exactly that query (and the
 * admin's filter by purpose). Every sale made before this migration was a shop sale as far as anyone
 * can tell, hence the default.
 */
export class SalePurpose1764300000000 implements MigrationInterface {
  name = 'SalePurpose1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query("ALTER TABLE sales ADD COLUMN purpose VARCHAR(20) NOT NULL DEFAULT 'shop'");
    await queryRunner.query('CREATE INDEX ix_sales_purpose_ends_at ON sales (purpose, ends_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX ix_sales_purpose_ends_at ON sales');
    await queryRunner.query('ALTER TABLE sales DROP COLUMN purpose');
  }
}
