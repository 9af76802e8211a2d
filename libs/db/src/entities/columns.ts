import { Column, type ColumnOptions, CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * The column types the schema uses throughout, as the migrations create them: one place says that
 * generated ids are BIGINT UNSIGNED, amounts and counts INT UNSIGNED, and instants DATETIME(3).
 * Entities import them as one namespace: `@column.varchar(40, { name: 'order_no' })`.
 */

type NamedOptions = Pick<ColumnOptions, 'name' | 'nullable' | 'default'>;

/** BIGINT UNSIGNED AUTO_INCREMENT: the driver returns it as a string, which is also what the API promises for ids. */
export const generatedId = (): PropertyDecorator => PrimaryGeneratedColumn({ type: 'bigint', unsigned: true });

/** INT UNSIGNED: amounts in cents, units, versions, incarnations. */
export const unsignedInt = (options: NamedOptions = {}): PropertyDecorator =>
  Column({ type: 'int', unsigned: true, ...options });

export const varchar = (length: number, options: NamedOptions = {}): PropertyDecorator =>
  Column({ type: 'varchar', length, ...options });

/** DATETIME(3): an instant to the millisecond, in UTC. */
export const instant = (name: string, options: Pick<ColumnOptions, 'nullable'> = {}): PropertyDecorator =>
  Column({ name, type: 'datetime', precision: 3, ...options });

export const createdAt = (): PropertyDecorator =>
  CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 });

export const updatedAt = (): PropertyDecorator =>
  UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 });
