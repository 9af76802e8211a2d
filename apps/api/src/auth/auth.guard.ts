import { type AppConfig, InjectAppConfig } from '@flash-sale/config';
import { DomainError, ErrorCode } from '@flash-sale/domain';
import {
  applyDecorators,
  type CanActivate,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { createVerifier } from 'fast-jwt';
import type { AuthUser, Role } from '../common/auth-user';

export const REQUIRED_ROLE = 'auth:required-role';
/** User ids go into Redis records separated by '|' and ' ': only this alphabet is accepted. */
const USER_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

interface TokenClaims {
  sub?: unknown;
  name?: unknown;
  role?: unknown;
}

@Injectable()
export class AuthGuard implements CanActivate {
  /**
   * Tokens are signed by @nestjs/jwt (jsonwebtoken) and verified by fast-jwt, Fastify's JWT library:
   * HS256 only (so `alg: none` and key confusion are refused), `exp`/`nbf` checked with no tolerance.
   * fast-jwt verifies several times cheaper than jsonwebtoken, on every request of the purchase path.
   * Its cache is off: keying it hashes every token (SHA-256) and maintains an LRU, which makes a first
   * verification more expensive than a later hit saves — a flash-sale shopper sends only a handful of
   * requests (docs/performance.md has the measurement).
   */
  private readonly verifyToken: (accessToken: string) => TokenClaims;

  constructor(
    private readonly reflector: Reflector,
    @InjectAppConfig() config: AppConfig,
  ) {
    // The same secret the JwtModule signs with (auth.module.ts).
    // `exp` is required: a token without one would be valid forever.
    this.verifyToken = createVerifier({ key: config.auth.jwtSecret, algorithms: ['HS256'], requiredClaims: ['exp'] });
  }

  canActivate(context: ExecutionContext): boolean {
    const user = this.callerOf(context.switchToHttp().getRequest<FastifyRequest>());

    const required =
      this.reflector.get<Role | undefined>(REQUIRED_ROLE, context.getHandler()) ??
      this.reflector.get<Role | undefined>(REQUIRED_ROLE, context.getClass());
    if (required === 'admin' && user.role !== 'admin') {
      throw new DomainError(ErrorCode.Forbidden, 'This needs an admin token');
    }
    return true;
  }

  /** The caller an access token names, or 401. Also used outside Nest routes (the queue dashboard). */
  async verify(accessToken: string): Promise<AuthUser> {
    return this.userOf(accessToken);
  }

  /**
   * The request's verified caller, or 401: read from its `Authorization: Bearer` header once, then kept
   * on the request (`request.user`). Also used by the purchase route, which Nest does not serve.
   */
  callerOf(request: FastifyRequest): AuthUser {
    if (request.user) return request.user;
    const header = request.headers.authorization;
    if (!header?.startsWith('Bearer ')) {
      throw new DomainError(ErrorCode.Unauthenticated, 'Sign in first: send Authorization: Bearer <token>');
    }
    request.user = this.userOf(header.slice('Bearer '.length).trim());
    return request.user;
  }

  /** `verify`, synchronously. */
  userOf(accessToken: string): AuthUser {
    let claims: TokenClaims;
    try {
      claims = this.verifyToken(accessToken);
    } catch {
      throw new DomainError(ErrorCode.Unauthenticated, 'The access token is invalid or expired');
    }
    const { sub, name, role } = claims;
    if (typeof sub !== 'string' || !USER_ID_PATTERN.test(sub) || (role !== 'guest' && role !== 'admin')) {
      throw new DomainError(ErrorCode.Unauthenticated, 'The access token is invalid or expired');
    }
    return { id: sub, name: typeof name === 'string' ? name : '', role };
  }
}

/** Any signed-in caller (guest or admin). */
export const Authenticated = () => applyDecorators(SetMetadata(REQUIRED_ROLE, 'guest'), UseGuards(AuthGuard));

/** Admins only: 401 without a token, 403 with a guest's. */
export const AdminOnly = () => applyDecorators(SetMetadata(REQUIRED_ROLE, 'admin'), UseGuards(AuthGuard));

export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): AuthUser => {
  const user = context.switchToHttp().getRequest<FastifyRequest>().user;
  if (!user) throw new DomainError(ErrorCode.Unauthenticated, 'Sign in first');
  return user;
});
