import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

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
  @Column({ type: 'varchar', length: 64 })
  name!: string;

  /** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash so they can be raised later. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
