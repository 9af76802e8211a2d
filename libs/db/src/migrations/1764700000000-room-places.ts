import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `room_places`: what a sale's waiting room promised each buyer, kept where a Redis loss cannot take it
 * (docs/architecture.md "The waiting room"): their place in line (a draw in [0, 1) before the opening, 1 +
 * the join sequence after it) and, once admitted, when their pass expires (ms since the epoch). Redis
 * runs the room; after it lost the room's data (or came back from an older copy) the room is rebuilt from
 * these rows, so the cap still counts every pass issued and nobody is overtaken.
 */
export class RoomPlaces1764700000000 implements MigrationInterface {
  name = 'RoomPlaces1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE room_places (
        sale_id BIGINT UNSIGNED NOT NULL,
        user_id VARCHAR(64) NOT NULL,
        place DOUBLE NOT NULL,
        pass_expires_at BIGINT NULL,
        PRIMARY KEY (sale_id, user_id)
      ) ENGINE=InnoDB`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE room_places');
  }
}
