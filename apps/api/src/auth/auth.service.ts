import { timingSafeEqual, createHash } from 'node:crypto';
import type { AppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ulid } from 'ulid';
import { APP_CONFIG } from '../infra/tokens';
import type { AuthUser } from './auth-user';

export const ADMIN_USER_ID = 'admin';

@Injectable()
export class AuthService {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async signInGuest(name: string | undefined): Promise<{ token: string; user: Pick<AuthUser, 'id' | 'name'> }> {
    const id = `u_${ulid()}`;
    const displayName = name?.trim() || `Guest ${id.slice(-5)}`;
    const token = await this.jwt.signAsync({ sub: id, name: displayName, role: 'guest' });
    return { token, user: { id, name: displayName } };
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
