import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reconciliation visits the sales that changed lately plus those whose books need work whatever
 * happens in Redis: units in doubt, or a lease whose Redis grant is not confirmed (PENDING). These two
 * indexes let one query find the latter among every sale ever made, reading only the few rows that
 * match (`StockLeaseRepository.salesNeedingRepair`).
 */
export class ReconciliationWorkIndex1764200000000 implements MigrationInterface {
  name = 'ReconciliationWorkIndex1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE INDEX ix_sales_in_doubt ON sales (in_doubt)');
    await queryRunner.query('CREATE INDEX ix_stock_leases_state ON stock_leases (state, sale_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX ix_stock_leases_state ON stock_leases');
    await queryRunner.query('DROP INDEX ix_sales_in_doubt ON sales');
  }
}
