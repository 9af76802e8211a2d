import type { DataSource, Repository } from 'typeorm';
import { UserEntity } from './entities/user.entity';

/** Registered accounts (guests have none: their id lives only in their JWT), and the names guests gave. */
export class UserRepository {
  private readonly users: Repository<UserEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.users = dataSource.getRepository(UserEntity);
  }

  /** Keeps the name a new guest gave, so the admin's order list can show and search it. */
  async rememberGuestName(userId: string, name: string): Promise<void> {
    await this.dataSource.query('INSERT IGNORE INTO guest_names (user_id, name) VALUES (?, ?)', [userId, name]);
  }

  exists(userId: string): Promise<boolean> {
    return this.users.existsBy({ id: userId });
  }

  /** Throws a duplicate-key error (isDuplicateKeyError) when the name or the id is taken. */
  async insert(user: Pick<UserEntity, 'id' | 'name' | 'passwordHash'>): Promise<void> {
    await this.users.insert(user);
  }

  findByName(name: string): Promise<UserEntity | null> {
    return this.users.findOneBy({ name });
  }
}
