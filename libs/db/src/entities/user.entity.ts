import { Entity, PrimaryColumn } from 'typeorm';
import * as column from './columns';

/**
 * A registered shopper. Guests have no row: their id lives only in their token. Registering keeps the
 * id a guest already had (so the guest's orders stay theirs); signing in again on any browser returns it.
 */
@Entity('users')
export class UserEntity {
  /** The same alphabet as every user id in tokens and Redis records (`u_<ulid>`). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id!: string;

  /** Unique, compared case-insensitively by the column's collation (`utf8mb4_unicode_ci`). */
  @column.varchar(64)
  name!: string;

  /** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash so they can be raised later. */
  @column.varchar(255, { name: 'password_hash' })
  passwordHash!: string;

  @column.createdAt()
  createdAt!: Date;
}
