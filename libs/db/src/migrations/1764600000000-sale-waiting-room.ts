import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sales.waiting_room`: a sale's waiting-room settings as JSON (`{"admitPerSecond", "maxShopping"?,
 * "passSeconds"}`), NULL for a sale without a room (docs/architecture.md "The waiting room").
 */
export class SaleWaitingRoom1764600000000 implements MigrationInterface {
  name = 'SaleWaitingRoom1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales ADD COLUMN waiting_room VARCHAR(200) NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE sales DROP COLUMN waiting_room');
  }
}
