import type { DataSource, Repository } from 'typeorm';
import { UserEntity } from './entities/user.entity';

/** Registered accounts (guests have none: their id lives only in their JWT). */
export class UserRepository {
  private readonly users: Repository<UserEntity>;

  constructor(dataSource: DataSource) {
    this.users = dataSource.getRepository(UserEntity);
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
