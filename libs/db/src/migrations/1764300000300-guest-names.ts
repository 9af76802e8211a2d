import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The name a guest gave at sign-in. A guest has no account row (its id lives in its token), yet the
 * admin must see and search who bought: this table keeps the name beside the id, written once at
 * sign-in. An account's name (users) wins when a guest later registers. Same collation as users, so a
 * search for "ada" finds "Ada".
 */
export class GuestNames1764300000300 implements MigrationInterface {
  name = 'GuestNames1764300000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE guest_names (
      user_id VARCHAR(64) NOT NULL PRIMARY KEY,
      name VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL,
      created_at DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
      KEY idx_guest_names_name (name)
    ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE guest_names');
  }
}
