import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Registered shoppers (docs/api.md `POST /api/auth/register`, `/login`). The name is unique under a
 * case-insensitive collation, so "Ada" and "ada" cannot be two accounts that look the same.
 */
export class Accounts1764110000000 implements MigrationInterface {
  name = 'Accounts1764110000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE users (
      id VARCHAR(64) NOT NULL PRIMARY KEY,
      name VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
      password_hash VARCHAR(255) NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      UNIQUE KEY uq_users_name (name)
    ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE users');
  }
}
