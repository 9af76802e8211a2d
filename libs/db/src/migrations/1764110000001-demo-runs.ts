import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The oversell demonstrations that were run (POST /api/admin/demo-runs), newest listed first. */
export class DemoRuns1764110000001 implements MigrationInterface {
  name = 'DemoRuns1764110000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE demo_runs (
      id VARCHAR(40) NOT NULL PRIMARY KEY,
      status VARCHAR(20) NOT NULL,
      stock INT UNSIGNED NOT NULL,
      buyers INT UNSIGNED NOT NULL,
      report MEDIUMTEXT NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      finished_at DATETIME(3) NULL,
      KEY ix_demo_runs_created (created_at)
    ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE demo_runs');
  }
}
