import { timingSafeEqual, createHash } from 'node:crypto';
import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { isDuplicateKeyError, UserRepository } from '@flash-sale/db';
import { Injectable, Logger } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ulid } from 'ulid';
import type { AuthUser } from '../common/auth-user';
import { hashPassword, verifyPassword } from './password-hasher';

export const ADMIN_USER_ID = 'admin';

/**
 * `user` of docs/api.md's auth answers; `registered` tells a guest (whose account ends with its token) from
 * an account.
 */
export interface SessionUser {
  id: string;
  name: string;
  registered: boolean;
}

/** Hashed once at boot: a sign-in for an unknown name still pays for one scrypt, so timing does not tell names apart. */
const DECOY_HASH = hashPassword('decoy password that matches nothing');

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);

  constructor(
    private readonly jwt: JwtService,
    @InjectAppConfig() private readonly config: AppConfig,
    private readonly users: UserRepository,
  ) {}

  async signInGuest(name: string | undefined): Promise<{ token: string; user: SessionUser }> {
    const id = `u_${ulid()}`;
    const displayName = name?.trim() || `Guest ${id.slice(-5)}`;
    // Kept for the admin's order list, not awaited: a guest signs in (and buys, from Redis) even while
    // MySQL is slow or down; such a guest's orders then show no name.
    this.users.rememberGuestName(id, displayName).catch((error: unknown) => {
      this.logger.warn(
        `Could not keep the name of guest ${id}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    return this.session({ id, name: displayName, registered: false });
  }

  /** A new account; a guest caller keeps its id, so the orders it made as a guest stay its own. */
  async register(name: string, password: string, guest?: AuthUser): Promise<{ token: string; user: SessionUser }> {
    const trimmed = name.trim();
    if (!trimmed) throw new DomainError(ErrorCode.ValidationFailed, 'name must not be blank');
    if (guest && (await this.users.exists(guest.id))) {
      throw new DomainError(ErrorCode.NameTaken, 'This account is already registered: sign in with its name instead');
    }
    const id = guest?.id ?? `u_${ulid()}`;
    try {
      await this.users.insert({ id, name: trimmed, passwordHash: await hashPassword(password) });
    } catch (error) {
      if (isDuplicateKeyError(error)) throw new DomainError(ErrorCode.NameTaken, `The name "${trimmed}" is taken`);
      throw error;
    }
    return this.session({ id, name: trimmed, registered: true });
  }

  /** Same answer for an unknown name and a wrong password: a sign-in form must not reveal who has an account. */
  async login(name: string, password: string): Promise<{ token: string; user: SessionUser }> {
    const user = await this.users.findByName(name.trim());
    const matches = await verifyPassword(password, user?.passwordHash ?? (await DECOY_HASH));
    if (!user || !matches) throw new DomainError(ErrorCode.InvalidCredentials, 'Wrong name or password');
    return this.session({ id: user.id, name: user.name, registered: true });
  }

  private async session(user: SessionUser): Promise<{ token: string; user: SessionUser }> {
    // Shoppers' tokens carry the role 'guest' whether or not they registered: the API treats them alike.
    const token = await this.jwt.signAsync({
      sub: user.id,
      name: user.name,
      role: 'guest',
      registered: user.registered,
    });
    return { token, user };
  }

  async signInAdmin(password: string): Promise<{ token: string }> {
    if (!sameSecret(password, this.config.auth.adminPassword)) {
      throw new DomainError(ErrorCode.InvalidCredentials, 'Wrong admin password');
    }
    return { token: await this.jwt.signAsync({ sub: ADMIN_USER_ID, name: 'Admin', role: 'admin' }) };
  }
}

/** Constant-time comparison (hashing first makes the lengths equal). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
